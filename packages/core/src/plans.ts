/** Plans an account can be on. Every account starts on `free`; `POST /v1/account/plan` changes it. */
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export const DEFAULT_PLAN: Plan = 'free';

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/** What a plan allows; `null` means unlimited. The relay enforces every figure here (docs/plans.md). */
export interface PlanLimits {
  /** Events an account's endpoints may accept per calendar month (UTC); ingest answers 429 `quota_exceeded` past it. */
  readonly eventsPerMonth: number | null;
  /** Endpoints an account may have at once (notification delivery is not one). */
  readonly endpoints: number | null;
  /** Days an event's history is kept after it is received (enterprise accounts may set their own). */
  readonly retentionDays: number;
  /** Team members, the account's first admin included. */
  readonly members: number | null;
  /** API requests each key may make per minute (ingest URLs are not counted). */
  readonly apiRequestsPerMinute: number;
  /**
   * Transformation CPU time, in ms, an account's transformations may use per minute in one
   * relay process (a minute's worth may be spent at once). Past it they run only as fast
   * as the allowance refills: the account's deliveries slow down, nobody else's.
   */
  readonly transformationCpuMsPerMinute: number;
  /** Whether `allowed_ips` may be set. */
  readonly ipAllowlist: boolean;
  /** Whether `custom_domain` may be set. */
  readonly customDomain: boolean;
  /** Whether `retention_days` may be set per account. */
  readonly customRetention: boolean;
  /** US dollars per month; `null` is a custom price. */
  readonly priceUsdPerMonth: number | null;
  readonly support: 'community' | 'priority' | 'dedicated';
}

/**
 * The one table of plans: the product spec's second set of figures (free, pro,
 * enterprise). Where the spec is silent (pro's members, rate-limit numbers, enterprise's
 * default retention) the figures are this relay's own, stated in docs/plans.md. Every
 * plan includes API access, MCP, transformations and the playground.
 */
export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: {
    eventsPerMonth: 10_000, endpoints: 3, retentionDays: 7, members: 3, apiRequestsPerMinute: 1_200, transformationCpuMsPerMinute: 10_000,
    ipAllowlist: false, customDomain: false, customRetention: false, priceUsdPerMonth: 0, support: 'community',
  },
  pro: {
    eventsPerMonth: 2_000_000, endpoints: null, retentionDays: 90, members: 25, apiRequestsPerMinute: 12_000, transformationCpuMsPerMinute: 30_000,
    ipAllowlist: true, customDomain: true, customRetention: false, priceUsdPerMonth: 79, support: 'priority',
  },
  enterprise: {
    eventsPerMonth: null, endpoints: null, retentionDays: 365, members: null, apiRequestsPerMinute: 60_000, transformationCpuMsPerMinute: 120_000,
    ipAllowlist: true, customDomain: true, customRetention: true, priceUsdPerMonth: null, support: 'dedicated',
  },
};

/**
 * An account's API requests per minute, all its keys together, in keys' worth: three times
 * the per-key figure (the plan's `apiRequestsPerMinute`, or HOOK_API_RATE_LIMIT). A few keys
 * (CI, a script, the console) may each use their whole budget at once, but minting more keys
 * buys no more requests.
 */
export const ACCOUNT_API_BUDGET_IN_KEYS = 3;

/** The range an enterprise account's own `retention_days` may take. */
export const CUSTOM_RETENTION_DAYS = { min: 1, max: 3650 } as const;

/** Days an account's events are kept: its own setting where the plan allows one, else the plan's. */
export function retentionDaysOf(plan: Plan, accountRetentionDays: number | null): number {
  const limits = PLAN_LIMITS[plan];
  return limits.customRetention && accountRetentionDays !== null ? accountRetentionDays : limits.retentionDays;
}

/** Usage thresholds, as fractions of the monthly allowance, that send `usage.threshold` once per month. */
export const USAGE_THRESHOLDS = [0.8, 1] as const;

/** The last month usageMonth worked out, with its bounds: ingest asks for every event, almost always the same month. */
let lastMonth: { fromMs: number; toMs: number; month: string } | undefined;

/** The calendar month (UTC) a moment falls in, as its first day `YYYY-MM-01`: the key usage is counted under. */
export function usageMonth(at: Date): string {
  const ms = at.getTime();
  if (lastMonth && ms >= lastMonth.fromMs && ms < lastMonth.toMs) return lastMonth.month;
  const month = `${at.toISOString().slice(0, 7)}-01`; // throws for an invalid date, as always
  lastMonth = { fromMs: Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1), toMs: nextUsageMonthStart(at).getTime(), month };
  return month;
}

/** The first moment of the next calendar month (UTC), when a monthly allowance resets. */
export function nextUsageMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}
