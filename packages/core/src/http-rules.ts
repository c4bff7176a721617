/**
 * Two rules about HTTP that every side applies the same way: the relay, the CLI and the
 * console (whose browser bundle imports this file by path, so it imports nothing).
 */

/** Whether a receiver's answer counts as delivered: any 2xx status. */
export function isSuccessStatus(status: number | null | undefined): boolean {
  return status != null && status >= 200 && status < 300;
}

/** Whether a Content-Type names JSON: `application/json` or any `+json` type, parameters ignored. */
export function isJsonContentType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}
