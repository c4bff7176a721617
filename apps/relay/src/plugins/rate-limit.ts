import type { FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { HookError, PLAN_LIMITS, RATE_LIMITED } from '@hook/core';
import type { ApiRateLimit } from '../config.ts';

/** The window of the per-key API limit: counts start again a minute after a key's first request. */
export const API_RATE_WINDOW_MS = 60_000;

/**
 * API keys whose counters this process keeps at once (least recently used go first). More
 * keys than this calling within one minute would let the oldest counters restart early.
 */
const API_RATE_TRACKED_KEYS = 100_000;

/**
 * Registers @fastify/rate-limit. Nothing is limited by default: a route opts in with
 * `config: { rateLimit: { max, timeWindow: '1 hour' } }`, counted per client address (the
 * refusal says "per hour", so keep that window), and the authenticated scope adds the
 * per-key limit with `limitApiRequestsPerKey`. Counts live in this process's memory. A
 * refusal is thrown as the registry's `rate_limited` error, so the one error handler
 * answers it as problem+json; the plugin has already set `Retry-After` (seconds) and
 * `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (the IETF draft's names),
 * which every limited response carries.
 */
export async function registerRateLimit(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) => new HookError(RATE_LIMITED, [context.max, 'per client address per hour', Math.ceil(context.ttl / 1000)]),
  });
}

/**
 * Limits every route of `scope` to a number of requests per API key per minute: the
 * caller's plan's `apiRequestsPerMinute`, or `limit` for every plan (0: no limit). Added
 * as an onRequest hook after `requireApiKey`'s, so it runs once the key is resolved (a
 * request without a valid key is refused before it is counted). WebSocket upgrades count
 * as one request each.
 */
export function limitApiRequestsPerKey(scope: FastifyInstance, limit: ApiRateLimit): void {
  if (limit === 0) return;
  scope.addHook('onRequest', scope.rateLimit({
    keyGenerator: (request) => request.caller.keyId,
    max: (request) => (limit === 'plan' ? PLAN_LIMITS[request.caller.plan].apiRequestsPerMinute : limit),
    timeWindow: API_RATE_WINDOW_MS,
    cache: API_RATE_TRACKED_KEYS,
    errorResponseBuilder: (_request, context) => new HookError(RATE_LIMITED, [context.max, 'per API key per minute', Math.ceil(context.ttl / 1000)]),
  }));
}
