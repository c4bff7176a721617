/**
 * The step every delivery path takes before sending an event (worker attempts, the
 * ingest shortcut, replays, `hook listen`): run the endpoint's transformation, apply its
 * filter, and say what goes out. An endpoint with neither skips all of it: the stored
 * bytes go as they are, signed as they are (docs/delivery.md).
 */
import { EVENT_TYPE_MAX_CHARS, forwardableHeaders, isJsonContentType, matchesFilter, parseFilterQuery, type FilterRequest } from '@hook/core';
import type { ClaimedDelivery } from '@hook/db';
import type { TransformRequest, TransformRunner } from '../transformations/types.ts';

/** The stored request and its endpoint's rules: what prepareDelivery reads of a delivery. */
export type StoredDelivery = Pick<ClaimedDelivery,
  'id' | 'type' | 'method' | 'path' | 'query' | 'headers' | 'body' | 'contentType' | 'endpointId' | 'endpointName' | 'transformationCode' | 'filter'>;

/** The request a transformation returned, ready to send. */
export interface TransformedRequest {
  /** Headers to send (before the signature headers are added): the returned ones minus hop-by-hop. */
  headers: Record<string, string>;
  body: Buffer;
  path: string;
  query: string;
}

export type PreparedDelivery =
  /** Send it: `request` null means the stored bytes and headers, untouched. */
  | { kind: 'send'; request: TransformedRequest | null; newType?: { type: string | null } }
  /** The filter did not match: mark the event filtered, send nothing. */
  | { kind: 'filtered'; newType?: { type: string | null } }
  /**
   * The transformation failed (threw, ran too long, used too much memory): the event fails
   * at once, an attempt records `error`, of kind `transformation_error`. `retryable`: the sandbox failed, not the code (its
   * thread was lost): the attempt fails and the event is retried as after a failed send.
   */
  | { kind: 'failed'; error: string; retryable?: true }
  /** No transformation thread was free in time: nothing happened; try the delivery again later (transformations/pool.ts). */
  | { kind: 'deferred' };

const UNTOUCHED: PreparedDelivery = { kind: 'send', request: null };

/** Filter-only deliveries with a body up to this size are prepared on the event loop: parsing them costs less than the trip to a thread. */
export const INLINE_FILTER_MAX_BODY_BYTES = 64 * 1024;

/**
 * Where a delivery is prepared, decided once for each attempt (preparationOf) and
 * carried to where it runs:
 * - `untouched`: no transformation and no filter to apply: the stored bytes go as they are;
 * - `inline`: a filter alone, over a small body: on the event loop (prepareDelivery);
 * - `sandbox`: a transformation, or a filter over a large body (parsing it would hold the
 *   event loop): on a transformation thread (TransformPool.prepare, which runs
 *   prepareDelivery there).
 */
export type Preparation = 'untouched' | 'inline' | 'sandbox';

/** How this attempt of a delivery is prepared (see Preparation); `applyFilter` is false for replays. */
export function preparationOf(delivery: Pick<StoredDelivery, 'transformationCode' | 'filter' | 'body'>, applyFilter: boolean): Preparation {
  const filter = applyFilter ? delivery.filter : null;
  if (delivery.transformationCode !== null) return 'sandbox';
  if (filter === null) return 'untouched';
  return delivery.body.length <= INLINE_FILTER_MAX_BODY_BYTES ? 'inline' : 'sandbox';
}

/** The stored body as a transformation or filter sees it: parsed when the content is JSON, else a UTF-8 string. */
export function requestBody(body: Buffer, contentType: string | null): unknown {
  const text = body.toString('utf8');
  if (isJsonContentType(contentType) && text.length > 0) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // Claims to be JSON and is not: the code (and the filter) see the text.
    }
  }
  return text;
}

/** An attempt error for a failed transformation: `transformation_failed: <message> (line N)`. */
export function transformationFailedError(message: string, line: number | null): string {
  return `transformation_failed: ${message}${line === null ? '' : ` (line ${line})`}`.replaceAll('\u0000', '');
}

function filterRequest(request: { path: string; query: string; headers: Record<string, string>; body: unknown }): FilterRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = String(value);
  return { body: request.body, headers, query: parseFilterQuery(request.query), path: request.path };
}

/** The transformed body as bytes: a string as UTF-8; anything else JSON (then the content type is application/json); null or undefined: empty. */
function encodeTransformed(request: TransformRequest): TransformedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (value === undefined || value === null) continue;
    headers[name.toLowerCase()] = String(value);
  }
  let body: Buffer;
  if (typeof request.body === 'string') body = Buffer.from(request.body, 'utf8');
  else if (request.body === undefined || request.body === null) body = Buffer.alloc(0);
  else {
    body = Buffer.from(JSON.stringify(request.body), 'utf8');
    headers['content-type'] = 'application/json';
  }
  const path = typeof request.path === 'string' && request.path !== '/' ? request.path : '';
  const query = typeof request.query === 'string' ? request.query.replace(/^\?/, '') : '';
  return { headers: forwardableHeaders(headers), body, path, query };
}

/**
 * What to do with one delivery. `applyFilter` is false for replays: a replay is an
 * explicit request and forces delivery of a filtered event (the transformation still runs).
 */
export async function prepareDelivery(runner: TransformRunner | undefined, delivery: StoredDelivery, applyFilter: boolean): Promise<PreparedDelivery> {
  const filter = applyFilter ? delivery.filter : null;
  if (delivery.transformationCode === null && filter === null) return UNTOUCHED;
  const body = requestBody(delivery.body, delivery.contentType);
  if (delivery.transformationCode === null) {
    const matched = matchesFilter(filter, filterRequest({ path: delivery.path || '/', query: delivery.query, headers: delivery.headers, body }));
    return matched ? UNTOUCHED : { kind: 'filtered' };
  }
  if (!runner) return { kind: 'failed', error: transformationFailedError('this relay process has no transformation sandbox', null) };
  const outcome = await runner.run(
    delivery.transformationCode,
    // The path after the ingest URL; '/' when there is none (and '/' returned appends nothing).
    { method: delivery.method, path: delivery.path || '/', query: delivery.query, headers: { ...delivery.headers }, body },
    { event_id: delivery.id, type: delivery.type, endpoint: { id: delivery.endpointId, name: delivery.endpointName } },
  );
  if (!outcome.ok) return { kind: 'failed', error: transformationFailedError(outcome.error.message, outcome.error.line) };
  const newType = outcome.type === undefined ? undefined : { type: outcome.type === null ? null : outcome.type.replaceAll('\u0000', '').slice(0, EVENT_TYPE_MAX_CHARS) };
  const returned = outcome.request;
  if (filter !== null && !matchesFilter(filter, filterRequest({
    path: typeof returned.path === 'string' ? returned.path : '/',
    query: typeof returned.query === 'string' ? returned.query : '',
    headers: returned.headers ?? {},
    body: returned.body,
  }))) {
    return newType ? { kind: 'filtered', newType } : { kind: 'filtered' };
  }
  const request = encodeTransformed(returned);
  return newType ? { kind: 'send', request, newType } : { kind: 'send', request };
}

/**
 * Where an attempt goes: the destination URL, or for a transformed request that URL with the
 * request's path appended to its path and the request's query merged into its query (the
 * request's values win). The sender and the trace's URL attributes both ask here.
 */
export function transformedUrl(destinationUrl: string, request: TransformedRequest | null): string {
  if (request === null || (request.path === '' && request.query === '')) return destinationUrl;
  const url = new URL(destinationUrl);
  if (request.path !== '') url.pathname = url.pathname.replace(/\/+$/, '') + (request.path.startsWith('/') ? request.path : `/${request.path}`);
  const added = new URLSearchParams(request.query);
  for (const name of new Set(added.keys())) url.searchParams.delete(name);
  for (const [name, value] of added) url.searchParams.append(name, value);
  return url.href;
}
