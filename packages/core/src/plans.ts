/** Plans an account can be on. Every account starts on `free`; `POST /v1/account/plan` changes it. */
export const PLANS = ['free', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];
export const DEFAULT_PLAN: Plan = 'free';

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/**
 * A plan's stated limits; `null` means unlimited. These are what each plan promises
 * (docs/plans.md). The relay shows them but does not enforce them yet: metering,
 * quotas and retention are issue 6.
 */
export interface PlanLimits {
  /** Events an account's endpoints may accept per calendar month (UTC). */
  readonly eventsPerMonth: number | null;
  /** Endpoints an account may have at once. */
  readonly endpoints: number | null;
  /** Days an event's history is kept after it is received. */
  readonly retentionDays: number | null;
}

/** The one table of plan limits (free and pro from the product spec; business is its top tier). */
export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: { eventsPerMonth: 10_000, endpoints: 3, retentionDays: 7 },
  pro: { eventsPerMonth: 2_000_000, endpoints: null, retentionDays: 90 },
  business: { eventsPerMonth: null, endpoints: null, retentionDays: 365 },
};
