/**
 * Ingest straight from node:http, past Fastify's request pipeline (issue 30): an ingest
 * request needs none of what that pipeline does per request (routing among ~100 routes,
 * a Request and a Reply object, a child logger, eight hooks, parameter validation,
 * response serialisation), and those cost as much CPU as storing the event. What ingest
 * does is receive.ts's, shared with the Fastify routes (index.ts); this module is only
 * the request's edge: which requests it takes, reading the body, and writing the answer
 * with the headers every ingest answer carries.
 *
 * It takes only requests whose answer it gives exactly as the routes would, and leaves the
 * rest to Fastify before reading anything (`serves`): an unusual URL (percent-encoding, an
 * id find-my-way would refuse), a Content-Type Fastify would refuse, an X-Forwarded-Host
 * (Fastify's trust-proxy rules name the host), and every request while the relay closes.
 * The relay turns it off (app.ts) when a request needs Fastify's hooks: tracing, or a log
 * line per request (HOOK_LOG_LEVEL=debug).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { HookError, INGEST_EVENT_ID_HEADER, INGEST_EVENT_STATUS_HEADER, newUlid, PAYLOAD_TOO_LARGE } from '@hook/core';
import { problemOf, toHookError } from '../../plugins/errors.ts';
import { TENANT_CONTENT_SECURITY_POLICY } from '../../plugins/tenant-content.ts';
import { INGEST_METHODS } from './index.ts';
import { INGEST_PREFIX, type IngestAnswer, type IngestReceiver, type RefusalHeaders } from './receive.ts';

/**
 * The ingest URLs taken here: an id of at most 100 URL-safe characters (find-my-way's
 * longest parameter; ingest ids are base64url), then nothing or a `/suffix`, with no `%`
 * (decoded by the router) or `#` (a query delimiter to it) before the query string.
 */
const DIRECT_PATH = /^\/v1\/ingest\/([A-Za-z0-9_-]{1,100})(?:\/[^#%?]*)?(?:\?|$)/;

/** A Content-Type every parser of Fastify's takes (its ContentType finds `type/subtype` tokens valid whatever follows `;`). */
const PLAIN_CONTENT_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;

/** Methods whose body Fastify never reads. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD']);

const METHODS = new Set(INGEST_METHODS);

export interface DirectIngestOptions {
  receiver: IngestReceiver;
  /** HOOK_MAX_PAYLOAD, bytes. */
  maxPayloadBytes: number;
  /** Whether the relay is closing: Fastify then answers (503, connection: close). */
  closing: () => boolean;
  /** Counts each answer (plugins/metrics.ts); absent with HOOK_METRICS=off. */
  countAnswer?: (statusCode: number, duplicate: boolean, seconds: number) => void;
  /** Where a 5xx is logged, as Fastify's error handler logs one. */
  log: FastifyBaseLogger;
}

/** An answer as written: status, headers, body bytes. */
interface Written {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer | string;
  duplicate: boolean;
}

export class DirectIngest {
  readonly #options: DirectIngestOptions;

  constructor(options: DirectIngestOptions) {
    this.#options = options;
  }

  /** Whether this path answers `request` (see above); decided before anything is read. */
  serves(request: IncomingMessage): boolean {
    const { url, method, headers } = request;
    if (url === undefined || method === undefined || !url.startsWith(INGEST_PREFIX) || !METHODS.has(method)) return false;
    if (!DIRECT_PATH.test(url) || headers['x-forwarded-host'] !== undefined || this.#options.closing()) return false;
    const contentType = headers['content-type'];
    return contentType === undefined || BODYLESS_METHODS.has(method) || PLAIN_CONTENT_TYPE.test(contentType);
  }

  /** Answers `request` (one `serves` took). */
  serve(request: IncomingMessage, response: ServerResponse): void {
    const startedAtMs = performance.now();
    const requestId = `req_${newUlid()}`;
    const url = request.url!;
    const ingestId = DIRECT_PATH.exec(url)![1]!;
    const host = request.headers.host ?? '';
    const hostname = host[0] === '[' ? host.slice(0, host.indexOf(']') + 1) : host.split(':', 1)[0]!;
    const refusal: RefusalHeaders = {};
    let closeConnection = false;
    this.#options.receiver.target(ingestId, hostname)
      .then(async (target) => {
        let body: Buffer;
        try {
          body = await this.#readBody(request);
        } catch (error) {
          // the client may still be sending: the connection cannot carry another request
          closeConnection = true;
          throw error;
        }
        return this.#options.receiver.receive(target, { method: request.method!, url, rawHeaders: request.rawHeaders, body, span: null }, refusal);
      })
      .then((answer) => this.#answer(answer), (error: unknown) => this.#problem(error, requestId, url, request, refusal))
      .then((written) => this.#write(response, requestId, written, closeConnection, startedAtMs))
      .catch((error: unknown) => {
        this.#options.log.error({ reqId: requestId, err: error }, 'could not answer an ingest request');
        response.destroy();
      });
  }

  /** The body as Fastify's buffer parser reads it (index.ts), or none where the routes read none. */
  #readBody(request: IncomingMessage): Promise<Buffer> {
    const { headers, method } = request;
    const noBody = BODYLESS_METHODS.has(method!)
      || (headers['content-type'] === undefined && headers['transfer-encoding'] === undefined && (headers['content-length'] === undefined || headers['content-length'] === '0'));
    if (noBody) return Promise.resolve(Buffer.alloc(0));
    const limit = this.#options.maxPayloadBytes;
    if (Number(headers['content-length']) > limit) return Promise.reject(new HookError(PAYLOAD_TOO_LARGE, [limit]));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const onData = (chunk: Buffer): void => {
        length += chunk.length;
        if (length > limit) {
          stop();
          reject(new HookError(PAYLOAD_TOO_LARGE, [limit]));
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = (): void => {
        stop();
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
      };
      const onError = (error: Error): void => {
        stop();
        reject(Object.assign(error, { statusCode: 400 }));
      };
      const stop = (): void => {
        request.off('data', onData).off('end', onEnd).off('error', onError);
      };
      request.on('data', onData).on('end', onEnd).on('error', onError);
    });
  }

  /** A stored (or duplicate, or handshake) request's answer, as the routes give it. */
  #answer(answer: IngestAnswer): Written {
    const answered = { [INGEST_EVENT_ID_HEADER]: answer.answered.id, [INGEST_EVENT_STATUS_HEADER]: answer.answered.outcome };
    if (answer.json) {
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', ...answered }, body: JSON.stringify(answer.json), duplicate: answer.duplicate };
    }
    return { status: answer.status, headers: { ...answer.headers, 'content-type': answer.contentType, ...answered }, body: answer.body, duplicate: answer.duplicate };
  }

  /** A refusal or failure as the error handler answers it (plugins/errors.ts). */
  #problem(error: unknown, requestId: string, url: string, request: IncomingMessage, refusal: RefusalHeaders): Written {
    const hookError = toHookError(error as Error, { url, headers: request.headers, routeOptions: { bodyLimit: this.#options.maxPayloadBytes } });
    if (hookError.status >= 500) this.#options.log.error({ reqId: requestId, err: error }, 'request failed');
    const { body, retryAfterSeconds } = problemOf(hookError, requestId);
    const headers: OutgoingHttpHeaders = { ...refusal, 'content-type': 'application/problem+json; charset=utf-8' };
    if (retryAfterSeconds !== undefined && headers['retry-after'] === undefined) headers['retry-after'] = String(retryAfterSeconds);
    return { status: hookError.status, headers, body: JSON.stringify(body), duplicate: false };
  }

  #write(response: ServerResponse, requestId: string, written: Written, closeConnection: boolean, startedAtMs: number): void {
    const body = typeof written.body === 'string' ? Buffer.from(written.body, 'utf8') : written.body;
    // as the routes' hooks set them: the request id first (a custom response may name its own), the sandbox last (app.ts, tenant-content.ts)
    response.writeHead(written.status, {
      'x-request-id': requestId,
      ...written.headers,
      ...(closeConnection || this.#options.closing() ? { connection: 'close' } : {}),
      'content-security-policy': TENANT_CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'content-length': body.length,
    });
    const countAnswer = this.#options.countAnswer;
    if (countAnswer) response.once('finish', () => countAnswer(written.status, written.duplicate, (performance.now() - startedAtMs) / 1000));
    response.end(body);
  }
}
