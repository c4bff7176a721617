import type { FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { HookError, RATE_LIMITED } from '@hook/core';

/**
 * Per-client-address rate limits, opt-in per route with
 * `config: { rateLimit: { max, timeWindow } }` (nothing is limited by default).
 * Counts live in this process's memory. A refusal is thrown as the registry's
 * `rate_limited` error, so the one error handler answers it as problem+json; the
 * plugin has already set `Retry-After` (seconds) and the `x-ratelimit-*` headers.
 */
export async function registerRateLimit(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) => new HookError(RATE_LIMITED, [context.max, Math.ceil(context.ttl / 1000)]),
  });
}
