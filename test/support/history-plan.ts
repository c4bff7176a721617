/**
 * Names in query plans over the partitioned history tables (docs/retention.md#partitions):
 * a plan names the partitions it reads (`event_r0`, `event_r90_20261125`, and for delivery
 * also its queue `delivery_open` and `delivery_done_r0`) and their indexes, each named
 * after the parent's (`event_r90_20261125_account_idx` for `event_account_idx`).
 */

/** Matches the table or any of its partitions. */
export function historyRelation(table: 'event' | 'delivery' | 'attempt'): RegExp {
  return new RegExp(`^${table}(_r\\d+(_\\d{8})?${table === 'delivery' ? '|_open|_done_r0' : ''})?$`);
}

/** Matches the parent's index `<table>_<suffix>` and its copy on any partition (`<table>_r7_20261127_<suffix>`). */
export function historyIndex(table: 'event' | 'delivery' | 'attempt', suffix: string): RegExp {
  return new RegExp(`^${table}_(r\\d+_(\\d{8}_)?)?${suffix}$`);
}

/**
 * Matches a key lookup of the table: the class 0 table's old primary key or a partition's
 * unique key on its id (for delivery: the queue's primary key, or a done leaf's key).
 */
export function historyKey(table: 'event' | 'delivery' | 'attempt'): RegExp {
  if (table === 'delivery') return /^delivery_(r0_pkey|open_pkey|done_r0_key|r\d+_(\d{8}_)?key)$/;
  const key = { event: 'id_class_key', attempt: 'id_event_class_key' }[table];
  return new RegExp(`^${table}_(pkey|(r\\d+_(\\d{8}_)?)?${key})$`);
}
