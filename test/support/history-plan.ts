/**
 * Names in query plans over the partitioned history tables (docs/retention.md#partitions):
 * a plan names the partitions it reads (`delivery_r0`, `delivery_r90_20261125`) and their
 * indexes, each named after the parent's (`delivery_r90_20261125_due_idx` for `delivery_due_idx`).
 */

/** Matches the table or any of its partitions. */
export function historyRelation(table: 'event' | 'delivery' | 'attempt'): RegExp {
  return new RegExp(`^${table}(_r\\d+(_\\d{8})?)?$`);
}

/** Matches the parent's index `<table>_<suffix>` and its copy on any partition (`<table>_r7_20261127_<suffix>`). */
export function historyIndex(table: 'event' | 'delivery' | 'attempt', suffix: string): RegExp {
  return new RegExp(`^${table}_(r\\d+_(\\d{8}_)?)?${suffix}$`);
}

/** Matches a key lookup of the table: the class 0 table's old primary key or a partition's unique key on its id. */
export function historyKey(table: 'event' | 'delivery' | 'attempt'): RegExp {
  const key = { event: 'id_class_key', delivery: 'event_destination_class_key', attempt: 'id_event_class_key' }[table];
  return new RegExp(`^${table}_(pkey|(r\\d+_(\\d{8}_)?)?${key})$`);
}
