import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BAD_REQUEST, HEADERS_TOO_LARGE, HookError, newUlid, INTERNAL_ERROR, MALFORMED_JSON, PAYLOAD_TOO_LARGE, REQUEST_TIMEOUT, ROUTE_NOT_FOUND,
  EVENT_STATUS_LIST_PATTERN, EVENT_STATUSES, STORAGE_UNAVAILABLE, UNSUPPORTED_MEDIA_TYPE, URL_TOO_LONG, VALIDATION_FAILED, type FieldError,
} from '@hook/core';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const CONTEXT_PREFIX: Record<string, string> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' };

function fieldPath(context: string, instancePath: string, child?: unknown): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (typeof child === 'string') parts.push(child);
  return [CONTEXT_PREFIX[context] ?? context, ...parts].join('.');
}

/** One readable message per ajv error; none for the bookkeeping errors of if/then. */
function describe(error: AjvError, context: string): FieldError | undefined {
  const { keyword, params } = error;
  switch (keyword) {
    case 'if':
      return undefined;
    case 'required':
      return { field: fieldPath(context, error.instancePath, params.missingProperty), message: 'is required' };
    case 'additionalProperties':
      return { field: fieldPath(context, error.instancePath, params.additionalProperty), message: 'is not a known field; remove it (GET /openapi.json lists the fields)' };
    case 'not':
      return { field: fieldPath(context, error.instancePath, 'url'), message: 'is only allowed with type "url"' };
    case 'minLength':
      if (params.limit === 1) return { field: fieldPath(context, error.instancePath), message: 'must not be empty' };
      break;
    case 'pattern': {
      const pattern = String(params.pattern);
      if (pattern === '\\S') return { field: fieldPath(context, error.instancePath), message: 'must not be only spaces' };
      const idPrefix = /^\^([a-z]+_)/.exec(pattern);
      if (idPrefix) return { field: fieldPath(context, error.instancePath), message: `must be an id like ${idPrefix[1]}01JD2Y0Z3M4N5P6Q7R8S9TVWXY` };
      if (pattern === '^https?://') return { field: fieldPath(context, error.instancePath), message: 'must be an http:// or https:// URL' };
      if (pattern === EVENT_STATUS_LIST_PATTERN) return { field: fieldPath(context, error.instancePath), message: `must be one of: ${EVENT_STATUSES.join(', ')}, or several separated by commas (failed,retrying)` };
      break;
    }
    case 'enum':
      return { field: fieldPath(context, error.instancePath), message: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}` };
    case 'type':
      return { field: fieldPath(context, error.instancePath), message: `must be ${String(params.type).replace(',', ' or ')}` };
  }
  return { field: fieldPath(context, error.instancePath), message: error.message ?? `fails ${keyword}` };
}

/** Turns a Fastify schema-validation failure into the registry's validation error. */
export function validationError(validation: AjvError[], context: string): HookError {
  // One message per field, the first ajv reports (an empty name is "empty", not also "only spaces").
  const byField = new Map<string, FieldError>();
  for (const error of validation) {
    const described = describe(error, context);
    if (described && !byField.has(described.field)) byField.set(described.field, described);
  }
  const errors = [...byField.values()];
  const summary = errors.map((error) => `${error.field} ${error.message}`).join('; ');
  return new HookError(VALIDATION_FAILED, [errors.length, summary], errors);
}

/**
 * Connection-level failures: socket errors, the server shutting down or refusing
 * connections (57P0x, 08xxx, 53300 too many connections, 55000 database not accepting
 * connections). A request that hit one was not stored, so 503 tells the sender to retry.
 */
const DATABASE_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300', '55000']);

function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; current && depth < 5; current = current.cause as typeof current, depth++) {
    if (typeof current.code === 'string' && (DATABASE_DOWN_CODES.has(current.code) || current.code.startsWith('08'))) return true;
    if (current instanceof Error && /Connection terminated|connect ECONNREFUSED|Pool is (closed|destroyed)|timeout exceeded when trying to connect/i.test(current.message)) return true;
  }
  return false;
}

/**
 * Text PostgreSQL cannot hold: U+0000 in a bound text parameter is refused as a malformed
 * protocol message (08P01, a class-08 code that would otherwise read as "database down"),
 * and in JSON as 22P05; 22021 is an invalid byte sequence. Retrying cannot help: it is bad input.
 */
function isUnstorableText(error: unknown): boolean {
  for (let current = error as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; current && depth < 5; current = current.cause as typeof current, depth++) {
    if (current.code === '08P01' && /invalid message format/i.test(String(current.message))) return true;
    if (current.code === '22P05' || current.code === '22021') return true;
  }
  return false;
}

/** What toHookError reads of a request (a FastifyRequest, or the direct ingest path's, routes/ingest/direct.ts). */
export interface FailedRequest {
  url: string;
  headers: IncomingHttpHeaders;
  routeOptions: { bodyLimit?: number };
}

/** Maps anything thrown while handling a request to a registry error. */
export function toHookError(error: FastifyError | Error, request: FailedRequest): HookError {
  if (error instanceof HookError) return error;
  const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fastifyError.validation) return validationError(fastifyError.validation, fastifyError.validationContext ?? 'body');
  switch (fastifyError.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new HookError(URL_TOO_LONG, [(request.url.split('?')[0] ?? '').slice(0, 80)]);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HookError(PAYLOAD_TOO_LARGE, [request.routeOptions.bodyLimit ?? 0]);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HookError(UNSUPPORTED_MEDIA_TYPE, [request.headers['content-type'] ?? '(none)']);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HookError(MALFORMED_JSON, [error.message]);
  }
  if (fastifyError.statusCode === 408 || fastifyError.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new HookError(REQUEST_TIMEOUT);
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) return new HookError(BAD_REQUEST, [error.message]);
  if (isUnstorableText(error)) return new HookError(BAD_REQUEST, ['a text value (a name, an id, a filter) contains a NUL character (\\u0000), which cannot be stored']);
  if (isDatabaseUnavailable(error)) return new HookError(STORAGE_UNAVAILABLE);
  return new HookError(INTERNAL_ERROR);
}

/**
 * Seconds a 503 asks the sender to wait (`Retry-After`), unless the route set its own:
 * a database outage usually lasts a restart or a failover, a shutting-down relay's
 * sender should go to another process (or this one restarted) at once.
 */
const RETRY_AFTER_SECONDS_503: Record<string, number> = { storage_unavailable: 5, service_unavailable: 1 };

/** A registry error's application/problem+json document (RFC 9457), and the Retry-After (seconds) its 503 asks for unless the route set one. */
export function problemOf(error: HookError, requestId: string): { body: Record<string, unknown>; retryAfterSeconds: number | undefined } {
  const { definition } = error;
  return {
    body: {
      type: `urn:hook:error:${definition.code}`,
      title: definition.title,
      status: definition.status,
      detail: error.message,
      code: definition.code,
      fix: definition.fix,
      request_id: requestId,
      // last, as the schema's serializer writes it (an optional field after the required ones)
      ...(error.errors ? { errors: error.errors } : {}),
    },
    retryAfterSeconds: RETRY_AFTER_SECONDS_503[definition.code],
  };
}

/** Sends a registry error as application/problem+json (RFC 9457). */
export function sendProblem(reply: FastifyReply, error: HookError): FastifyReply {
  const { body, retryAfterSeconds } = problemOf(error, String(reply.request.id));
  if (retryAfterSeconds !== undefined && !reply.hasHeader('retry-after')) reply.header('retry-after', retryAfterSeconds);
  return reply
    .code(error.definition.status)
    .header('x-request-id', reply.request.id)
    .type('application/problem+json')
    .send(body);
}

/** Errors the router raises before any route runs (bad URL encoding, over-long path segment). */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void sendProblem(reply, toHookError(error, request));
}

/**
 * Fastify's `clientErrorHandler`: requests Node rejects before Fastify sees them (headers
 * over Node's 16 KiB limit, a request line that is not HTTP, a body that never arrives)
 * get the same problem+json as every other error instead of Fastify's plain JSON.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const hookError = error.code === 'HPE_HEADER_OVERFLOW' ? new HookError(HEADERS_TOO_LARGE)
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? new HookError(REQUEST_TIMEOUT)
    : new HookError(BAD_REQUEST, [error.message]);
  const { definition } = hookError;
  const requestId = `req_${newUlid()}`;
  const body = JSON.stringify(problemOf(hookError, requestId).body);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${definition.status} ${STATUS_CODES[definition.status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

/** One error handler and one not-found handler for the whole app. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const hookError = toHookError(error, request);
    if (hookError.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, hookError);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return sendProblem(reply, new HookError(ROUTE_NOT_FOUND, [request.method, path]));
  });
}
