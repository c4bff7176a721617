import { decodeCursor, encodeCursor, HookError, INVALID_CURSOR, LIST_LIMIT_DEFAULT } from '@hook/core';
import type { EventListPage, ListedEvent } from '@hook/db';

/** The last id of the previous page, or nothing on the first page. */
function lastIdOf(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const lastId = decodeCursor(cursor);
  if (!lastId) throw new HookError(INVALID_CURSOR, [JSON.stringify(cursor.slice(0, 40))]);
  return lastId;
}

/** The `id < cursor` condition of a newest-first keyset page, or nothing on the first page. */
export function afterCursor(cursor: string | undefined): { id?: { $lt: string } } {
  const lastId = lastIdOf(cursor);
  return lastId === undefined ? {} : { id: { $lt: lastId } };
}

/** afterCursor for listEvents (packages/db event-summaries.ts, with eventPage). */
export function beforeIdOf(cursor: string | undefined): { beforeId?: string } {
  const lastId = lastIdOf(cursor);
  return lastId === undefined ? {} : { beforeId: lastId };
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

/**
 * `{data, next_cursor}` from a page of listEvents, whose cursor carries on where the page
 * stopped looking: after its last event, or, on a page cut short by its bound, below the
 * events it looked through.
 */
export function eventPage<Item>(page: EventListPage, present: (event: ListedEvent) => Item): { data: Item[]; next_cursor: string | null } {
  return { data: page.events.map(present), next_cursor: page.nextBeforeId === null ? null : encodeCursor(page.nextBeforeId) };
}
