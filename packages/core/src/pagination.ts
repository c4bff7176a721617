/** Page sizes for every list route. */
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

/**
 * Keyset cursors are the last id of the previous page, wrapped so clients treat them as
 * opaque and a hand-edited one is caught rather than silently paging wrong.
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`v1:${lastId}`, 'utf8').toString('base64url');
}

/** The id inside a cursor, or null when the string was not made by `encodeCursor`. */
export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('v1:')) return null;
  const id = text.slice(3);
  return /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/.test(id) ? id : null;
}
