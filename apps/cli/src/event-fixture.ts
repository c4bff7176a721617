/**
 * Fixture files (docs/cli.md#fixture-files): one stored event as a JSON file —
 * the request as it arrived (method, path, query, headers) and its exact body bytes,
 * as UTF-8 text or base64 — written by `hook events export` and sent again, byte for
 * byte, by `hook send --fixture`.
 */
import { readFile } from 'node:fs/promises';
import { INGEST_SEND_METHODS, type Event, type IngestSendMethod } from '@hook/client';
import { forwardableHeaders, type BodyEncoding } from '@hook/core';
import { FIXTURE_INVALID, INPUT_UNREADABLE, UserError } from './errors.ts';

/** The format's version, in every file's `hook_fixture` field. */
export const FIXTURE_VERSION = 1;

export interface EventFixture {
  hook_fixture: typeof FIXTURE_VERSION;
  /** Where it came from (for people; not sent): the event, its endpoint, when it arrived, its type. */
  event_id: string | null;
  endpoint_id: string | null;
  received_at: string | null;
  type: string | null;
  method: IngestSendMethod;
  /** After the receiving URL: '' or starting with '/'. */
  path: string;
  /** Without '?'; '' when none. */
  query: string;
  content_type: string | null;
  /** The request headers as they arrived, names lower-cased. */
  headers: Record<string, string>;
  body_encoding: BodyEncoding;
  /** The exact body: the text when `body_encoding` is `utf8`, else base64. */
  body: string;
}

/** What `hook send --fixture` sends. */
export interface FixtureRequest {
  method: IngestSendMethod;
  /** Path and query to put after the receiving URL. */
  suffix: string;
  /** The original headers that may travel (not hop-by-hop ones such as host or content-length, nor the relay's own signature headers). */
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** The fixture for a stored event (`GET /v1/events/{id}`). */
export function fixtureFromEvent(event: Event): EventFixture {
  if (!(INGEST_SEND_METHODS as readonly string[]).includes(event.method)) {
    throw new UserError(FIXTURE_INVALID, `${event.id} arrived as ${event.method}, which \`hook send\` cannot send again`, `Fixtures hold requests sent with ${INGEST_SEND_METHODS.join(', ')}.`);
  }
  return {
    hook_fixture: FIXTURE_VERSION,
    event_id: event.id,
    endpoint_id: event.endpoint_id,
    received_at: event.received_at,
    type: event.type,
    method: event.method as IngestSendMethod,
    path: event.path,
    query: event.query,
    content_type: event.content_type,
    headers: event.headers,
    body_encoding: event.body_encoding,
    body: event.body,
  };
}

/** The fixture as its file holds it: two-space JSON and a final newline. */
export function fixtureText(fixture: EventFixture): string {
  return `${JSON.stringify(fixture, null, 2)}\n`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isStringRecord(value: unknown): value is Record<string, string> {
  return !!value && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((item) => typeof item === 'string');
}

/** Checks a fixture file's JSON; `file` names it in errors. */
export function parseFixture(text: string, file: string): EventFixture {
  const invalid = (what: string): UserError => new UserError(FIXTURE_INVALID, `${file} ${what}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalid(`is not JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('is not a JSON object');
  const fixture = parsed as Record<string, unknown>;
  if (fixture.hook_fixture === undefined) throw invalid('is not a Hook fixture: it has no "hook_fixture": 1');
  if (fixture.hook_fixture !== FIXTURE_VERSION) {
    throw new UserError(FIXTURE_INVALID, `${file} is a version ${JSON.stringify(fixture.hook_fixture)} fixture; this hook reads version ${FIXTURE_VERSION}`, 'Update hook, or export the event again with this one (`hook events export <event> --fixture <file>`).');
  }
  if (typeof fixture.method !== 'string' || !(INGEST_SEND_METHODS as readonly string[]).includes(fixture.method.toUpperCase())) {
    throw invalid(`has "method" ${JSON.stringify(fixture.method)}; it must be one of ${INGEST_SEND_METHODS.join(', ')}`);
  }
  for (const field of ['path', 'query', 'body'] as const) {
    if (typeof fixture[field] !== 'string') throw invalid(`has no text "${field}"`);
  }
  if (fixture.path !== '' && !(fixture.path as string).startsWith('/')) throw invalid(`has "path" ${JSON.stringify(fixture.path)}; it must be '' or start with /`);
  if (!isStringRecord(fixture.headers)) throw invalid('has no "headers" object of text values');
  if (fixture.body_encoding !== 'utf8' && fixture.body_encoding !== 'base64') throw invalid(`has "body_encoding" ${JSON.stringify(fixture.body_encoding)}; it must be "utf8" or "base64"`);
  if (fixture.body_encoding === 'base64' && !BASE64.test(fixture.body as string)) throw invalid('has a "body" that is not base64 although "body_encoding" is "base64"');
  const optionalText = (field: string): string | null => (typeof fixture[field] === 'string' ? (fixture[field] as string) : null);
  return {
    hook_fixture: FIXTURE_VERSION,
    event_id: optionalText('event_id'),
    endpoint_id: optionalText('endpoint_id'),
    received_at: optionalText('received_at'),
    type: optionalText('type'),
    method: (fixture.method as string).toUpperCase() as IngestSendMethod,
    path: fixture.path as string,
    query: (fixture.query as string).replace(/^\?/, ''),
    content_type: optionalText('content_type'),
    headers: Object.fromEntries(Object.entries(fixture.headers).map(([name, value]) => [name.toLowerCase(), value])),
    body_encoding: fixture.body_encoding,
    body: fixture.body as string,
  };
}

export async function readFixture(file: string): Promise<EventFixture> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserError(INPUT_UNREADABLE, `Cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`, 'Check the path after --fixture (`hook events export <event> --fixture <file>` writes one).');
  }
  return parseFixture(text, file);
}

/** The request a fixture describes, ready to send again: the same method, path, query, body bytes and travelling headers. */
export function fixtureRequest(fixture: EventFixture): FixtureRequest {
  const body = Buffer.from(fixture.body, fixture.body_encoding === 'base64' ? 'base64' : 'utf8');
  const headers = forwardableHeaders(fixture.headers);
  // The stored content type is the request's; a fixture edited by hand may have only the field.
  if (fixture.content_type !== null && headers['content-type'] === undefined) headers['content-type'] = fixture.content_type;
  return {
    method: fixture.method,
    suffix: `${fixture.path}${fixture.query === '' ? '' : `?${fixture.query}`}`,
    headers,
    body: fixture.method === 'GET' || fixture.method === 'OPTIONS' ? undefined : body,
  };
}
