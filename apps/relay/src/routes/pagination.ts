import { decodeCursor, encodeCursor, HookError, INVALID_CURSOR, LIST_LIMIT_DEFAULT } from '@hook/core';

/** The `id < cursor` condition of a newest-first keyset page, or nothing on the first page. */
export function afterCursor(cursor: string | undefined): { id?: { $lt: string } } {
  if (cursor === undefined) return {};
  const lastId = decodeCursor(cursor);
  if (!lastId) throw new HookError(INVALID_CURSOR, [JSON.stringify(cursor.slice(0, 40))]);
  return { id: { $lt: lastId } };
}

/** Rows to fetch for a page: one more than asked tells whether another page follows. */
export function fetchSize(limit: number | undefined): number {
  return (limit ?? LIST_LIMIT_DEFAULT) + 1;
}

/** `{data, next_cursor}` from rows fetched with `fetchSize`. */
export function toPage<Row extends { id: string }, Item>(rows: Row[], limit: number | undefined, present: (row: Row) => Item): { data: Item[]; next_cursor: string | null } {
  const size = limit ?? LIST_LIMIT_DEFAULT;
  const pageRows = rows.slice(0, size);
  return {
    data: pageRows.map(present),
    next_cursor: rows.length > size ? encodeCursor(pageRows[pageRows.length - 1]!.id) : null,
  };
}
