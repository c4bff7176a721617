/**
 * The relay's log (pino, JSON lines on stderr; docs/deployment.md#logs). Bodies and
 * headers are never logged on purpose; this is the net under that: credential headers
 * are censored wherever a record carries them, and anything shaped like a Hook secret
 * is masked in every line before it is written, whatever wrote it (an error message
 * quoting a SQL statement, a library's debug line).
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { LogLevel } from './config.ts';

/** Header values that are credentials or signatures, at the paths where a log record can carry headers. */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', '"webhook-signature"', '"x-hook-signature"', '"x-api-key"'];
export const REDACTED_PATHS = ['req.headers', 'request.headers', 'headers', 'res.headers'].flatMap((parent) => SECRET_HEADERS.map((name) => `${parent}.${name.startsWith('"') ? `[${name}]` : name}`));

/**
 * API keys (hk_), signing secrets (whsec_), playground tokens (pgt_) and bearer
 * credentials. The prefix stays, so a masked line still says which kind was there.
 */
const SECRET_PATTERN = /\b(hk|whsec|pgt)_[A-Za-z0-9+/=_-]{6,}|\b(Bearer|Basic)\s+[A-Za-z0-9+/=._~-]+/g;

/** A log line with every secret-shaped token masked. */
export function maskSecrets(line: string): string {
  return line.replace(SECRET_PATTERN, (_match, prefix: string | undefined, scheme: string | undefined) => (prefix ? `${prefix}_[redacted]` : `${scheme} [redacted]`));
}

/** Fastify's logger option for the relay: `level`, JSON lines to `destination` with secrets censored and masked. */
export function relayLoggerOptions(level: LogLevel, destination: { write(line: string): unknown }): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    stream: { write: (line: string) => destination.write(maskSecrets(line)) },
  };
}

/**
 * One `debug` line per answered request (HOOK_LOG_LEVEL=debug or trace), with its reqId
 * (the `request_id` of error bodies and `x-request-id`). The route's pattern stands in
 * for the URL: an ingest URL's id is its secret, and the playground's WebSocket carries
 * its token in the query string.
 */
export function logRequests(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    if (request.log.level !== 'debug' && request.log.level !== 'trace') return;
    request.log.debug({ method: request.method, route: request.routeOptions.url ?? '(no route)', statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime * 10) / 10 }, 'request answered');
  });
}
