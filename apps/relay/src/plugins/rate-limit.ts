import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor, type RateLimitOptions } from '@fastify/rate-limit';
import { ACCOUNT_API_BUDGET_IN_KEYS, HookError, PLAN_LIMITS, RATE_LIMITED } from '@hook/core';
import { countRateLimitedRequest, pruneRateLimitCounters, type Orm } from '@hook/db';
import type { ApiRateLimit } from '../config.ts';

/** The window of the per-key API limit: counts start again a minute after a key's first request. */
export const API_RATE_WINDOW_MS = 60_000;

/** How often each process removes counters whose window has ended (they only take room: see pruneRateLimitCounters). */
export const RATE_LIMIT_PRUNE_INTERVAL_MS = 60_000;

/** A failing counter is logged at most this often per process, so an outage does not log once per request. */
const COUNTER_FAILURE_LOG_INTERVAL_MS = 60_000;

/** What @fastify/rate-limit hands a route's store child besides the limit's options (its README: "routeInfo"). */
interface ChildOptions {
  routeInfo?: { method?: string | string[]; url?: string };
  groupId?: string;
}

/**
 * A @fastify/rate-limit store whose counts live in PostgreSQL (@hook/db's
 * rate_limit_counter), so every relay process on the database shares them: a key gets its
 * limit once, not once per process, and a restart does not hand out a fresh budget.
 *
 * Why PostgreSQL and not the plugin's Redis store: the database is the one thing every
 * relay process already shares, and the relay needs nothing else to run; a second shared
 * service only for counters would be one more thing to deploy and to lose. Why a store
 * for the plugin rather than a limiter of our own: the plugin keeps deciding everything
 * else (per-route options, the RateLimit-* and Retry-After headers, the refusal); the
 * store only decides where the counts live. The cost is one statement (an upsert on
 * one row, a HOT update, no WAL) and its round trip per limited request: about 0.2 ms of
 * this process's CPU; `npm run bench:api` measures what it takes from an API request
 * (docs/deployment.md#rate-limits-across-processes).
 *
 * If the statement fails (the database is unreachable or overloaded) the request goes
 * through uncounted (`skipOnError`), and a warning is logged: a limit is a guard against
 * overuse, and a relay that cannot count should not refuse requests it could otherwise
 * answer (those that need the database fail on their own, with 503).
 *
 * Each route's child store keeps its counts apart by prefixing keys with the route
 * (`POST /v1/accounts 203.0.113.7`), or with the routes' `groupId` when several routes share
 * one count (`account-creation 203.0.113.7`); the per-key limit's keys carry their own prefix.
 */
function sharedCounterStore(orm: Orm, onFailure: (error: unknown) => void): FastifyRateLimitStoreCtor {
  return class SharedCounterStore implements FastifyRateLimitStore {
    readonly #namespace: string;
    readonly #groupId: string;

    constructor(_options?: unknown, namespace = '', groupId = '') {
      this.#namespace = namespace;
      this.#groupId = groupId;
    }

    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      // The plugin appends a group's id to the key; the namespace names the group already.
      const own = this.#groupId && key.endsWith(this.#groupId) ? key.slice(0, -this.#groupId.length) : key;
      countRateLimitedRequest(orm, this.#namespace ? `${this.#namespace} ${own}` : own, timeWindow).then(
        ({ count, ttlMs }) => callback(null, { current: count, ttl: ttlMs }),
        (error: unknown) => {
          onFailure(error);
          callback(error instanceof Error ? error : new Error(String(error)));
        },
      );
    }

    child(options: object): FastifyRateLimitStore {
      const { routeInfo: route, groupId } = options as ChildOptions;
      if (groupId) return new SharedCounterStore(undefined, groupId, groupId);
      const method = Array.isArray(route?.method) ? route.method.join(',') : route?.method;
      return new SharedCounterStore(undefined, route?.url ? `${method} ${route.url}` : '');
    }
  };
}

/**
 * IPv6 clients are counted by their /64, the smallest network a provider hands a customer:
 * an attacker with one has 2^64 addresses, so counting addresses would count nothing. An
 * IPv4 client is counted by its address, and an IPv4-mapped IPv6 one by its IPv4 address.
 */
const CLIENT_IPV6_PREFIX_LENGTH = 64;

/**
 * The limit of every route that makes a permanent account, `POST /v1/accounts` and
 * `POST /playground/claim` (HOOK_SIGNUP_RATE_LIMIT): one count per client network and
 * hour that they share, so claiming playgrounds adds no accounts beside the signups. `hook`
 * is where in the route's lifecycle a request is counted.
 */
export function accountCreationRateLimit(perHour: number, hook: 'onRequest' | 'preHandler' = 'onRequest'): { rateLimit?: RateLimitOptions } {
  return perHour > 0 ? { rateLimit: { max: perHour, timeWindow: '1 hour', groupId: 'account-creation', hook } } : {};
}

/**
 * Registers @fastify/rate-limit with the shared counters above. Nothing is limited by
 * default: a route opts in with `config: { rateLimit: { max, timeWindow: '1 hour' } }`,
 * counted per client address (an IPv6 client's /64; the refusal says "per hour", so keep
 * that window), and the
 * authenticated scope adds the per-key and per-account limits with `limitApiRequests`. A refusal is
 * thrown as the registry's `rate_limited` error, so the one error handler answers it as
 * problem+json; the plugin has already set `Retry-After` (seconds) and `RateLimit-Limit`,
 * `RateLimit-Remaining`, `RateLimit-Reset` (the IETF draft's names), which every limited
 * response carries. Counters whose window has ended are removed every minute by each
 * process (one idempotent statement, so any number of processes may run it).
 */
export async function registerRateLimit(app: FastifyInstance): Promise<void> {
  let lastFailureLoggedAt = Number.NEGATIVE_INFINITY;
  const onFailure = (error: unknown): void => {
    if (Date.now() - lastFailureLoggedAt < COUNTER_FAILURE_LOG_INTERVAL_MS) return;
    lastFailureLoggedAt = Date.now();
    app.log.warn({ err: error }, 'could not count a request against its rate limit; letting requests through uncounted until the database answers');
  };
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    store: sharedCounterStore(app.orm, onFailure),
    skipOnError: true,
    ipv6Subnet: CLIENT_IPV6_PREFIX_LENGTH,
    errorResponseBuilder: (_request, context) => new HookError(RATE_LIMITED, [context.max, 'per client address per hour', Math.ceil(context.ttl / 1000)]),
  });

  let pruning: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      pruning = pruning.then(() => pruneRateLimitCounters(app.orm)).then(() => undefined, (error: unknown) => app.log.warn({ err: error }, 'could not remove expired rate-limit counters'));
    }, RATE_LIMIT_PRUNE_INTERVAL_MS);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await pruning;
  });
}

/**
 * Limits every route of `scope` to a number of requests per API key per minute: the
 * caller's plan's `apiRequestsPerMinute`, or `limit` for every plan (0: no limit); and all
 * the keys of an account together to ACCOUNT_API_BUDGET_IN_KEYS times that, so more keys
 * do not buy more requests. Added as onRequest hooks after `requireApiKey`'s, so they run
 * once the key is resolved (a request without a valid key is refused before it is
 * counted). A request the key's limit refuses is not counted for the account. The
 * RateLimit-* headers tell the key's count, or the account's when that refuses. WebSocket
 * upgrades count as one request each. The counts are shared by every relay process on the
 * database.
 */
export function limitApiRequests(scope: FastifyInstance, limit: ApiRateLimit): void {
  if (limit === 0) return;
  const perKey = (request: FastifyRequest): number => (limit === 'plan' ? PLAN_LIMITS[request.caller.plan].apiRequestsPerMinute : limit);
  scope.addHook('onRequest', scope.rateLimit({
    keyGenerator: (request) => `api-key ${request.caller.keyId}`,
    max: perKey,
    timeWindow: API_RATE_WINDOW_MS,
    errorResponseBuilder: (_request, context) => new HookError(RATE_LIMITED, [context.max, 'per API key per minute', Math.ceil(context.ttl / 1000)]),
  }));
  // createRateLimit, not a second rateLimit hook: the plugin runs one rateLimit hook per request.
  const countForAccount = scope.createRateLimit({
    keyGenerator: (request) => `api-account ${request.caller.accountId}`,
    max: (request) => perKey(request) * ACCOUNT_API_BUDGET_IN_KEYS,
    timeWindow: API_RATE_WINDOW_MS,
  });
  scope.addHook('onRequest', async (request, reply) => {
    const account = await countForAccount(request);
    if (account.isAllowed || !account.isExceeded) return;
    reply.header('ratelimit-limit', account.max).header('ratelimit-remaining', 0)
      .header('ratelimit-reset', account.ttlInSeconds).header('retry-after', account.ttlInSeconds);
    throw new HookError(RATE_LIMITED, [account.max, 'per account per minute (all its API keys together)', account.ttlInSeconds]);
  });
}
