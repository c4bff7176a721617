import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { INGEST_EVENT_ID_HEADER, INGEST_EVENT_STATUS_HEADER, type IngestOutcome } from '@hook/core';
import { sandboxTenantContent } from '../../plugins/tenant-content.ts';
import { errorResponses, IngestAccepted } from '../../schemas.ts';
import type { IngestReceiver, RefusalHeaders } from './receive.ts';
import type { IngestTarget } from './target-cache.ts';

export { receivedHeaders } from './receive.ts';

/** Methods an ingest URL answers. GET and HEAD carry no body (Fastify does not read one). */
export const INGEST_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET', 'HEAD', 'OPTIONS'];

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
 * `ANY /v1/ingest/{ingest_id}[/…]` as Fastify routes (what ingest does is receive.ts's). They
 * serve what the direct path (direct.ts) leaves to Fastify, every request when it is off
 * (tracing, debug logs), `inject` in tests, and /openapi.json. The endpoint is looked up
 * in onRequest, before the body is read.
 */
export async function ingestRoutes(app: FastifyInstance, options: { receiver: IngestReceiver; maxPayloadBytes: number }): Promise<void> {
  const { receiver } = options;
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

  async function findTarget(request: FastifyRequest<{ Params: { ingest_id: string } }>): Promise<void> {
    request.ingestTarget = await receiver.target(request.params.ingest_id, request.hostname);
  }

  async function ingest(request: FastifyRequest<{ Params: { ingest_id: string } }>, reply: FastifyReply) {
    const refusal: RefusalHeaders = {};
    const answer = await receiver.receive(request.ingestTarget!, {
      method: request.method,
      url: request.url,
      rawHeaders: request.raw.rawHeaders,
      body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      span: request.ingestSpan ?? null,
    }, refusal).catch((error: unknown) => {
      reply.headers(refusal);
      throw error;
    });
    request.ingestDuplicate = answer.duplicate;
    request.ingestAnswered = answer.answered;
    if (answer.json) return answer.json;
    return reply.code(answer.status).headers(answer.headers).type(answer.contentType).send(answer.body);
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
