import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { dedupeKeyOf, ENDPOINT_DISABLED, extractEventType, readJsonObject, HANDSHAKE_REFUSED, HookError, INGEST_EVENT_ID_HEADER, INGEST_EVENT_STATUS_HEADER, INGEST_HOST_REQUIRED, INGEST_NOT_FOUND, type IngestOutcome, newId, nextUsageMonthStart, QUOTA_EXCEEDED, renderResponseBody, SIGNATURE_INVALID, type VerificationFailure } from '@hook/core';
import type { EventWriter, InsertOutcome, NewEvent } from '@hook/db';
import type { LocalDelivery } from '../../delivery/worker.ts';
import type { StreamHub } from '../../stream/hub.ts';
import type { ListenerRegistry } from '../../stream/listeners.ts';
import { ingestHostOf, sandboxTenantContent } from '../../plugins/tenant-content.ts';
import { errorResponses, IngestAccepted } from '../../schemas.ts';
import type { CustomDomainCache } from './custom-domains.ts';
import type { IngestTarget, IngestTargetCache } from './target-cache.ts';

/** Methods an ingest URL answers. GET, HEAD and OPTIONS carry no body (Fastify does not read one). */
export const INGEST_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET', 'HEAD', 'OPTIONS'];

const INGEST_PREFIX = '/v1/ingest/';

declare module 'fastify' {
  interface FastifyRequest {
    ingestTarget: IngestTarget | null;
    /** The request repeated a dedupe key already stored: answered with the original's id, nothing stored (counted apart in metrics). */
    ingestDuplicate: boolean;
    /** The event a request was answered for (stored, duplicate or handshake), put on the answer's headers in onSend. */
    ingestAnswered: { id: string; outcome: IngestOutcome } | null;
  }
}

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
function refuseOverAllowance(reply: FastifyReply, outcome: InsertOutcome, receivedAt: Date): asserts outcome is Exclude<InsertOutcome, { reason: 'quota_exceeded' }> {
  if (outcome.stored || outcome.reason !== 'quota_exceeded') return;
  reply.header('retry-after', Math.max(1, Math.ceil((nextUsageMonthStart(receivedAt).getTime() - Date.now()) / 1000)));
  throw new HookError(QUOTA_EXCEEDED, [outcome.eventsPerMonth, outcome.month, outcome.plan]);
}

/**
 * `ANY /v1/ingest/{ingest_id}[/…]`: stores the request byte-exact and answers only after
 * the row is committed. The endpoint is looked up before the body is read, so an unknown
 * or disabled URL is refused without taking in a large body.
 */
export async function ingestRoutes(app: FastifyInstance, options: { writer: EventWriter; targets: IngestTargetCache; domains: CustomDomainCache; local: LocalDelivery; listeners: ListenerRegistry; hub: StreamHub; maxPayloadBytes: number; ingestUrl: string | undefined }): Promise<void> {
  // First, so it covers every answer here, refusals thrown before the handler included.
  sandboxTenantContent(app);
  // Any content type, kept as raw bytes: never parsed, never re-serialised.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.decorateRequest('ingestTarget', null);
  app.decorateRequest('ingestDuplicate', false);
  app.decorateRequest('ingestAnswered', null);
  // In onSend, after the handler set a custom response's headers: nothing it holds (even one
  // stored before x-hook-* was refused) can replace or remove these.
  app.addHook('onSend', (request, reply, _payload, done) => {
    const answered = request.ingestAnswered;
    if (answered !== null) reply.header(INGEST_EVENT_ID_HEADER, answered.id).header(INGEST_EVENT_STATUS_HEADER, answered.outcome);
    done();
  });
  const ingestUrl = options.ingestUrl;
  const ingestHost = ingestUrl === undefined ? null : ingestHostOf(ingestUrl);

  async function findTarget(request: FastifyRequest<{ Params: { ingest_id: string } }>): Promise<void> {
    const ingestId = request.params.ingest_id;
    const endpoint = await options.targets.get(ingestId);
    if (!endpoint) throw new HookError(INGEST_NOT_FOUND, [ingestId]);
    // An account's custom domain receives for that account's endpoints only.
    const domainOwner = await options.domains.accountOf(request.hostname);
    if (domainOwner !== null && domainOwner !== endpoint.accountId) throw new HookError(INGEST_NOT_FOUND, [ingestId]);
    // Ingest on its own host (HOOK_INGEST_URL): never on the console's, which custom domains are not.
    if (ingestUrl !== undefined && domainOwner === null && request.hostname.toLowerCase() !== ingestHost) throw new HookError(INGEST_HOST_REQUIRED, [ingestUrl, request.hostname]);
    if (endpoint.status === 'disabled') throw new HookError(ENDPOINT_DISABLED, [endpoint.id]);
    request.ingestTarget = endpoint;
  }

  async function ingest(request: FastifyRequest<{ Params: { ingest_id: string } }>, reply: FastifyReply) {
    const target = request.ingestTarget!;
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const headers = receivedHeaders(request.raw.rawHeaders);
    const contentType = headers['content-type'] ?? null;
    const receivedAt = new Date();
    const where = pathAndQuery(request.url);
    // A provider's handshake (docs/sources.md, Handshakes) is answered at once, stored marked, never delivered.
    const handshake = target.handshake?.respond({ method: request.method, query: where.query, contentType, body });
    if (handshake?.kind === 'refuse') throw new HookError(HANDSHAKE_REFUSED, [target.handshake!.provider, handshake.reason]);
    if (handshake) {
      const id = newId('event', receivedAt.getTime());
      const outcome = await options.writer.write({
        id, accountId: target.accountId, endpointId: target.id, type: `${target.handshake!.provider}.handshake`, method: request.method, ...where,
        headers, body, contentType, size: body.length, receivedAt, status: 'pending', lease: null, handshake: target.handshake!.provider,
      });
      refuseOverAllowance(reply, outcome, receivedAt);
      request.ingestAnswered = { id, outcome: 'handshake' };
      reply.code(handshake.status).headers(handshake.headers ?? {}).type(handshake.contentType);
      return reply.send(Buffer.from(handshake.body, 'utf8'));
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
    // Every delivery is due now (a paused destination's wait until it resumes, then go in
    // arrival order; `cli` ones go to the next listener's claim). For an endpoint with one
    // destination, this process's worker (URL) or a listen session here (`cli`), if it has
    // a slot free, takes the delivery as it is stored.
    const sole = target.status === 'active' ? target.soleDestination : null;
    const slot = sole === null ? null : sole.type === 'url' ? options.local.reserve(sole.id, id) : options.listeners.reserve(sole.id, id);
    const event = {
      id,
      accountId: target.accountId,
      endpointId: target.id,
      type: extractEventType(headers, contentType ?? undefined, body, json),
      method: request.method,
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
      traceParent: request.ingestSpan?.receivedAs(id) ?? null,
    } satisfies NewEvent;
    const write = options.writer.write(event);
    if (slot) {
      write.then((outcome) => (outcome.stored && outcome.delivery ? slot.deliver(outcome.delivery) : slot.cancel()), () => slot.cancel());
    }
    const outcome = await write;
    refuseOverAllowance(reply, outcome, receivedAt);
    // A duplicate is answered as its original was, with the original's id: the sender stops retrying.
    const answeredId = outcome.stored ? id : outcome.originalId;
    if (outcome.stored && options.hub.watches(event.accountId)) options.hub.eventStored({ ...event, claimedHere: outcome.delivery !== null });
    request.ingestDuplicate = !outcome.stored;
    request.ingestAnswered = { id: answeredId, outcome: outcome.stored ? 'pending' : 'duplicate' };
    if (target.response) {
      // The endpoint's own answer (docs/sources.md, Custom responses): bytes with its headers exactly as
      // set (a Buffer is neither serialised nor given a charset), never through the JSON schema.
      const { status, headers: answer, body: template } = target.response;
      reply.code(status).headers(answer);
      if (answer['content-type'] === undefined) reply.type('text/plain; charset=utf-8');
      return reply.send(Buffer.from(renderResponseBody(template, answeredId), 'utf8'));
    }
    return { id: answeredId, status: outcome.stored ? ('pending' as const) : ('duplicate' as const) };
  }

  const schema = {
    tags: ['ingest'],
    summary: 'Receive an event: any method, content type and body (no auth; the URL is the secret)',
    params: Type.Object({ ingest_id: Type.String({ maxLength: 200 }) }),
    response: { 200: IngestAccepted, ...errorResponses },
  };
  for (const url of ['/v1/ingest/:ingest_id', '/v1/ingest/:ingest_id/*']) {
    app.route({
      method: INGEST_METHODS,
      url,
      bodyLimit: options.maxPayloadBytes,
      schema: url.endsWith('*') ? { ...schema, hide: true } : schema,
      onRequest: findTarget,
      handler: ingest,
    });
  }
}
