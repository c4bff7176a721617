/**
 * What ingest does with a request, whichever way it arrived: through Fastify's route
 * (index.ts) or straight from node:http (direct.ts). Both hand over the request as
 * received and get back the answer to give; neither decides anything about it.
 */
import { dedupeKeyOf, ENDPOINT_DISABLED, extractEventType, readJsonObject, HANDSHAKE_REFUSED, HookError, INGEST_HOST_REQUIRED, INGEST_NOT_FOUND, type IngestOutcome, newId, nextUsageMonthStart, QUOTA_EXCEEDED, renderResponseBody, SIGNATURE_INVALID, type VerificationFailure } from '@hook/core';
import type { EventWriter, InsertOutcome, NewEvent } from '@hook/db';
import type { DeliverySlots } from '../../delivery/claimer.ts';
import type { StreamHub } from '../../stream/hub.ts';
import type { ListenerRegistry } from '../../stream/listeners.ts';
import { ingestHostOf } from '../../plugins/tenant-content.ts';
import type { CustomDomainCache } from './custom-domains.ts';
import type { IngestTarget, IngestTargetCache } from './target-cache.ts';

/** Where ingest URLs start; what follows is `<ingest_id>[/<suffix>][?<query>]`. */
export const INGEST_PREFIX = '/v1/ingest/';

export interface IngestReceiverOptions {
  writer: EventWriter;
  targets: IngestTargetCache;
  domains: CustomDomainCache;
  /** This process's delivery worker, which takes URL deliveries as they are stored; null in a process that does not deliver (HOOK_ROLE=api). */
  local: DeliverySlots | null;
  listeners: ListenerRegistry;
  hub: StreamHub;
  ingestUrl: string | undefined;
}

/** A request as ingest needs it, body read. */
export interface ReceivedRequest {
  method: string;
  /** The raw request target: `/v1/ingest/<id>[/…][?…]`. */
  url: string;
  /** node:http's raw header list (names as sent, repeats kept). */
  rawHeaders: string[];
  body: Buffer;
  /** The request's trace span (tracing.ts): names the stored event and gives its trace context; null untraced. */
  span: { receivedAs(eventId: string): string } | null;
}

/** The answer to a request ingest took: the JSON body (`json`) or the endpoint's own bytes. */
export type IngestAnswer = {
  /** The event the request was answered for (stored, duplicate or handshake): the x-hook-event-* headers. */
  answered: { id: string; outcome: IngestOutcome };
  /** Answered as a duplicate: nothing stored (counted apart in metrics). */
  duplicate: boolean;
} & (
  | { json: { id: string; status: 'pending' | 'duplicate' } }
  | { json: null; status: number; headers: Record<string, string>; contentType: string; body: Buffer }
);

/** Headers a refusal carries besides its problem+json (the 429's Retry-After). */
export type RefusalHeaders = Record<string, string | number>;

/**
 * Request headers as received, names lower-cased. Taken from the raw header list so
 * repeated headers are all kept (joined with ", "; Set-Cookie lines with "\n").
 */
export function receivedHeaders(rawHeaders: string[]): Record<string, string> {
  // A plain object built once (no copy): own properties only are looked at, and a header
  // named __proto__ is defined as a property rather than assigned (which would set the prototype).
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!;
    if (Object.hasOwn(headers, name)) headers[name] = `${headers[name]}${name === 'set-cookie' ? '\n' : ', '}${value}`;
    else if (name === '__proto__') Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
    else headers[name] = value;
  }
  return headers;
}

/** Splits the raw `/v1/ingest/<id><suffix>?<query>` into the suffix path and the query string, both as sent. */
function pathAndQuery(url: string): { path: string; query: string } {
  const queryStart = url.indexOf('?');
  const afterPrefix = (queryStart === -1 ? url : url.slice(0, queryStart)).slice(INGEST_PREFIX.length);
  const suffixStart = afterPrefix.indexOf('/');
  return {
    path: suffixStart === -1 ? '' : afterPrefix.slice(suffixStart),
    query: queryStart === -1 ? '' : url.slice(queryStart + 1),
  };
}

/** Refuses a request its account had no allowance left for this month (429, retry when the next month starts). */
function refuseOverAllowance(outcome: InsertOutcome, receivedAt: Date, refusal: RefusalHeaders): asserts outcome is Exclude<InsertOutcome, { reason: 'quota_exceeded' }> {
  if (outcome.stored || outcome.reason !== 'quota_exceeded') return;
  refusal['retry-after'] = Math.max(1, Math.ceil((nextUsageMonthStart(receivedAt).getTime() - Date.now()) / 1000));
  throw new HookError(QUOTA_EXCEEDED, [outcome.eventsPerMonth, outcome.month, outcome.plan]);
}

/**
 * Looks up an ingest URL's endpoint and stores what it receives. The endpoint is looked up
 * (`target`) before the body is read, so an unknown or disabled URL is refused without
 * taking in a large body; `receive` then stores the request byte-exact and resolves only
 * after the row is committed. Refusals are thrown as registry errors.
 */
export class IngestReceiver {
  readonly #options: IngestReceiverOptions;
  readonly #ingestHost: string | null;

  constructor(options: IngestReceiverOptions) {
    this.#options = options;
    this.#ingestHost = options.ingestUrl === undefined ? null : ingestHostOf(options.ingestUrl);
  }

  /** The endpoint receiving at `ingestId` on `hostname` (the request's, no port). */
  async target(ingestId: string, hostname: string): Promise<IngestTarget> {
    const { targets, domains, ingestUrl } = this.#options;
    const endpoint = await targets.get(ingestId);
    if (!endpoint) throw new HookError(INGEST_NOT_FOUND, [ingestId]);
    // An account's custom domain receives for that account's endpoints only.
    const domainOwner = await domains.accountOf(hostname);
    if (domainOwner !== null && domainOwner !== endpoint.accountId) throw new HookError(INGEST_NOT_FOUND, [ingestId]);
    // Ingest on its own host (HOOK_INGEST_URL): never on the console's, which custom domains are not.
    if (ingestUrl !== undefined && domainOwner === null && hostname.toLowerCase() !== this.#ingestHost) throw new HookError(INGEST_HOST_REQUIRED, [ingestUrl, hostname]);
    if (endpoint.status === 'disabled') throw new HookError(ENDPOINT_DISABLED, [endpoint.id]);
    return endpoint;
  }

  /** Stores `request` for `target` and says how to answer; a refusal's own headers go into `refusal`. */
  async receive(target: IngestTarget, request: ReceivedRequest, refusal: RefusalHeaders): Promise<IngestAnswer> {
    const { writer, local, listeners, hub } = this.#options;
    const { body, method } = request;
    const headers = receivedHeaders(request.rawHeaders);
    const contentType = headers['content-type'] ?? null;
    const receivedAt = new Date();
    const where = pathAndQuery(request.url);
    // A provider's handshake (docs/sources.md, Handshakes) is answered at once, stored marked, never delivered.
    const handshake = target.handshake?.respond({ method, query: where.query, contentType, body });
    if (handshake?.kind === 'refuse') throw new HookError(HANDSHAKE_REFUSED, [target.handshake!.provider, handshake.reason]);
    if (handshake) {
      const id = newId('event', receivedAt.getTime());
      const outcome = await writer.write({
        id, accountId: target.accountId, endpointId: target.id, type: `${target.handshake!.provider}.handshake`, method, ...where,
        headers, body, contentType, size: body.length, receivedAt, status: 'pending', lease: null, handshake: target.handshake!.provider,
      });
      refuseOverAllowance(outcome, receivedAt, refusal);
      return {
        answered: { id, outcome: 'handshake' }, duplicate: false, json: null,
        status: handshake.status, headers: handshake.headers ?? {}, contentType: handshake.contentType, body: Buffer.from(handshake.body, 'utf8'),
      };
    }
    // Checked before anything is reserved or stored: a rejected request leaves no trace but its metric.
    let verification = null;
    if (target.verification) {
      const result = target.verification.verify(headers, body, receivedAt.getTime());
      if (!result.verified && target.verification.mode === 'reject') {
        const { header, reason } = result as VerificationFailure;
        throw new HookError(SIGNATURE_INVALID, [result.provider, reason.replace(/_/g, ' '), header], [{ field: `headers.${header}`, message: reason }]);
      }
      verification = { provider: result.provider, verified: result.verified, reason: result.reason };
    }
    // The body is parsed at most once, for its type and its dedupe key, and only if either needs it.
    let parsed: Record<string, unknown> | null | undefined;
    const json = () => (parsed === undefined ? (parsed = readJsonObject(contentType, body)) : parsed);
    // An unverified request (mode flag) takes no part in dedupe: a forged one must not claim a genuine delivery's key.
    const dedupeKey = target.dedupe && (verification === null || verification.verified) ? dedupeKeyOf(target.dedupe, headers, json) : null;
    const id = newId('event', receivedAt.getTime());
    // Each ordered destination's key for this event: read as a dedupe key is; none found is the key "".
    const orderingKeys = target.ordered.length === 0 ? null
      : Object.fromEntries(target.ordered.map(({ destinationId, key }) => [destinationId, key === null ? '' : (dedupeKeyOf(key, headers, json) ?? '')]));
    // Every delivery is due now (a paused destination's wait until it resumes, then go in
    // arrival order; `cli` ones go to the next listener's claim). For an endpoint with one
    // destination, this process's worker (URL) or a listen session here (`cli`), if it has
    // a slot free, takes the delivery as it is stored.
    const sole = target.status === 'active' ? target.soleDestination : null;
    const slot = sole === null ? null : sole.type === 'url' ? (local?.reserve(sole.id, id) ?? null) : listeners.reserve(sole.id, id);
    const event = {
      id,
      accountId: target.accountId,
      endpointId: target.id,
      type: extractEventType(headers, contentType ?? undefined, body, json),
      method,
      ...where,
      headers,
      body,
      contentType,
      size: body.length,
      receivedAt,
      status: 'pending',
      lease: slot?.lease ?? null,
      verification,
      dedupeKey,
      orderingKeys,
      traceParent: request.span?.receivedAs(id) ?? null,
    } satisfies NewEvent;
    const write = writer.write(event);
    if (slot) {
      write.then((outcome) => (outcome.stored && outcome.delivery ? slot.deliver(outcome.delivery) : slot.cancel()), () => slot.cancel());
    }
    const outcome = await write;
    refuseOverAllowance(outcome, receivedAt, refusal);
    // A duplicate is answered as its original was, with the original's id: the sender stops retrying.
    const answeredId = outcome.stored ? id : outcome.originalId;
    if (outcome.stored && hub.watches(event.accountId)) hub.eventStored({ ...event, claimedHere: outcome.delivery !== null });
    const answered = { id: answeredId, outcome: outcome.stored ? ('pending' as const) : ('duplicate' as const) };
    if (target.response) {
      // The endpoint's own answer (docs/sources.md, Custom responses): bytes with its headers exactly as
      // set (a Buffer is neither serialised nor given a charset), never through the JSON schema.
      const { status, headers: answer, body: template } = target.response;
      return {
        answered, duplicate: !outcome.stored, json: null,
        status, headers: answer, contentType: answer['content-type'] ?? 'text/plain; charset=utf-8', body: Buffer.from(renderResponseBody(template, answeredId), 'utf8'),
      };
    }
    return { answered, duplicate: !outcome.stored, json: { id: answeredId, status: answered.outcome } };
  }
}
