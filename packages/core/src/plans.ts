/** Plans an account can be on. Limits and pricing arrive with metering; every account starts on `free`. */
export const PLANS = ['free', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];
export const DEFAULT_PLAN: Plan = 'free';
