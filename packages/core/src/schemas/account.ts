/** The account, its plan, usage, members, API keys and notification settings. */
import { Type } from 'typebox';
import { ENDPOINT_STATUSES } from '../events.ts';
import { CUSTOM_RETENTION_DAYS, PLANS } from '../plans.ts';
import { IdOf, ResourceName, Timestamp } from './common.ts';

export const Plan = Type.Enum([...PLANS]);

/** The DNS TXT record that proves a pending custom domain is the account's. */
export const CustomDomainVerificationSchema = Type.Object({
  type: Type.Literal('TXT'),
  name: Type.String({ description: 'Where the record goes: _hook-challenge.<custom_domain>' }),
  value: Type.String({ description: 'What it must hold: hook-domain-verification=<token>; the token is new for each claim' }),
}, { description: 'Add this TXT record at your DNS provider, then verify the domain' });

export const AccountSchema = Type.Object({
  id: IdOf('account', 'Account id'),
  plan: Plan,
  email: Type.Union([Type.String({ format: 'email' }), Type.Null()], { description: 'Given at signup; null when none was' }),
  allowed_ips: Type.Array(Type.String(), { description: 'CIDRs API requests must come from (canonical form); empty allows any address. Ingest URLs are not affected' }),
  custom_domain: Type.Union([Type.String(), Type.Null()], { description: "A hostname the account claimed for its endpoint URLs; used instead of the relay's once custom_domain_status is verified; null when none" }),
  custom_domain_status: Type.Union([Type.Enum(['pending', 'verified']), Type.Null()], {
    description: 'pending: claimed, no effect yet (endpoint URLs keep the relay\'s host) until POST /v1/account/custom-domain/verify finds the TXT record; verified: in use; null when no custom_domain',
  }),
  custom_domain_verification: Type.Union([CustomDomainVerificationSchema, Type.Null()], { description: 'The DNS record to add while the claim is pending; null otherwise' }),
  retention_days: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "The account's own event retention in days (enterprise); null keeps the plan's" }),
  created_at: Timestamp,
});

const Limit = (description: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: `${description}; null means unlimited` });

export const PlanLimitsSchema = Type.Object({
  events_per_month: Limit('Events the account may accept per calendar month (UTC); past it ingest answers 429 quota_exceeded'),
  endpoints: Limit('Endpoints the account may have at once'),
  members: Limit('Team members, the first admin included'),
  retention_days: Type.Integer({ minimum: 1, description: "Days an event's history is kept after it is received (the account's own setting on enterprise)" }),
  api_requests_per_minute: Type.Integer({ minimum: 1, description: 'API requests each key may make per minute (ingest URLs are not counted)' }),
  transformation_cpu_ms_per_minute: Type.Integer({ minimum: 1, description: "CPU time (ms) the account's transformations may use per minute in one relay process; past it they run only as fast as the allowance refills (docs/plans.md)" }),
  ip_allowlist: Type.Boolean({ description: 'Whether allowed_ips may be set' }),
  custom_domain: Type.Boolean({ description: 'Whether custom_domain may be set' }),
  custom_retention: Type.Boolean({ description: 'Whether retention_days may be set' }),
  price_usd_per_month: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'US dollars per month; null is a custom price. No payment is taken' }),
  support: Type.Enum(['community', 'priority', 'dedicated']),
}, { description: "What the account's plan allows; the relay enforces each figure (docs/plans.md)" });

export const UsageSchema = Type.Object({
  month: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'The calendar month (UTC) counted, YYYY-MM' }),
  events_accepted: Type.Integer({ minimum: 0, description: 'Events stored this month: exact, counted in the same statement that stores them' }),
  events_remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Events the plan still allows this month; null means unlimited' }),
  resets_at: Timestamp,
  endpoints: Type.Integer({ minimum: 0, description: 'Endpoints the account has now' }),
  members: Type.Integer({ minimum: 0, description: 'Members the account has now' }),
  transformation_cpu_ms: Type.Integer({ minimum: 0, description: "CPU time this month's transformations used, in ms (each relay process adds what it measured every few seconds)" }),
}, { description: 'Usage, read from one snapshot' });

export const PlanChangeSchema = Type.Object({
  id: IdOf('planChange', 'Plan change id'),
  from_plan: Plan,
  to_plan: Plan,
  changed_at: Timestamp,
});

/** What `GET /v1/account` and `POST /v1/account/plan` answer. */
export const AccountDetailsSchema = Type.Object({
  account: AccountSchema,
  limits: PlanLimitsSchema,
  usage: UsageSchema,
  plan_history: Type.Array(PlanChangeSchema, { description: 'Every plan change, newest first' }),
});

/** `POST /v1/accounts` body. */
export const SignupRequestSchema = Type.Object({
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'A contact address for the account; stored and shown, never verified or mailed' })),
}, { additionalProperties: false });

/** `POST /v1/accounts`: the new account and its first key, shown only here. */
export const SignupSchema = Type.Object({ account: AccountSchema, api_key: Type.String({ description: 'hk_…, shown only here' }) });

/** Most addresses and CIDRs an account's allowed_ips may hold. */
export const MAX_ALLOWED_IPS = 100;

/** `PATCH /v1/account` body: fields left out stay as they are. */
export const AccountUpdateSchema = Type.Object({
  allowed_ips: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: MAX_ALLOWED_IPS,
    description: `IP addresses and CIDRs (IPv4 or IPv6) API requests must come from; [] allows any address. Stored in canonical form. Pro and enterprise; at most ${MAX_ALLOWED_IPS}`,
  })),
  custom_domain: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()], {
    description: "A hostname you control (CNAME it to the relay) for the account's endpoint URLs; it takes effect once verified (a DNS TXT record, see custom_domain_verification). null clears it. Pro and enterprise",
  })),
  retention_days: Type.Optional(Type.Union([Type.Integer({ minimum: CUSTOM_RETENTION_DAYS.min, maximum: CUSTOM_RETENTION_DAYS.max }), Type.Null()], {
    description: `Days to keep events, ${CUSTOM_RETENTION_DAYS.min} to ${CUSTOM_RETENTION_DAYS.max}; null keeps the plan's. Enterprise only`,
  })),
  email: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Null()], { description: 'A contact address; null clears it' })),
}, { additionalProperties: false });

/** `DELETE /v1/account`: the account is gone, with how many of each thing were erased. */
export const AccountDeletedSchema = Type.Object({
  id: Type.String({ description: 'The erased account (acct_…)' }),
  deleted: Type.Literal(true),
  erased: Type.Object({
    endpoints: Type.Integer({ description: 'Endpoints erased, deleted ones included' }),
    destinations: Type.Integer(),
    events: Type.Integer({ description: 'Events erased with their deliveries and attempts' }),
    api_keys: Type.Integer(),
    members: Type.Integer(),
  }, { description: 'How many of each were erased' }),
}, { description: 'The account is gone: its keys no longer work and its ingest URLs answer 404' });

export const ApiKeySchema = Type.Object({
  id: IdOf('apiKey', 'Key id'),
  name: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
  member_id: IdOf('member', 'The member the key belongs to; it acts with that member\'s role'),
  created_at: Timestamp,
});

/** `POST /v1/api-keys` body. */
export const ApiKeyCreateSchema = Type.Object({ name: Type.Optional(ResourceName) }, { additionalProperties: false });

/** `POST /v1/api-keys`: the key object plus the key itself, shown only here. */
export const CreatedApiKeySchema = Type.Object({
  ...ApiKeySchema.properties,
  api_key: Type.String({ description: 'The key itself (hk_…). Shown only in this response.' }),
});

export const MemberRole = Type.Enum(['admin', 'member'], { description: 'admin: may also manage members, API keys of others and the plan; member: everything else' });

export const MemberSchema = Type.Object({
  id: IdOf('member', 'Member id'),
  email: Type.Union([Type.String({ format: 'email' }), Type.Null()], { description: "The member's address; null for an account's first admin made without one" }),
  role: MemberRole,
  created_at: Timestamp,
});

/** `POST /v1/members` body. */
export const MemberCreateSchema = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254, description: "The member's address; unique in the account (case-insensitive). Stored and shown, never mailed" }),
  role: Type.Optional({ ...MemberRole, description: 'admin or member (default member)' }),
}, { additionalProperties: false });

/** `PATCH /v1/members/{id}` body. */
export const MemberUpdateSchema = Type.Object({ role: MemberRole }, { additionalProperties: false });

/** What `POST /v1/members` answers: the member and its first API key, shown once. */
export const CreatedMemberSchema = Type.Object({
  member: MemberSchema,
  api_key: Type.String({ description: "The new member's first API key (hk_…). Shown only in this response: hand it to the member." }),
});

/** `GET`/`PUT /v1/account/notifications`: where the account's notifications go (docs/notifications.md). */
export const NotificationSettingsSchema = Type.Object({
  url: Type.String({ description: 'Where the account\'s notifications are POSTed' }),
  secret: Type.Union([Type.String(), Type.Null()], { description: 'The signing secret of notification deliveries, whsec_…; null for a member\'s key (only admins, who set the URL, see it)' }),
  status: Type.Enum([...ENDPOINT_STATUSES], { description: 'active; disabled after the URL answered 410 (set the URL again to resume)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'The account\'s notification destination (docs/notifications.md)' });
