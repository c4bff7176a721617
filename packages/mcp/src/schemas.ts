/**
 * Zod schemas of what the tools take and give back: the REST API's JSON (docs/api.md),
 * field names as on the wire. Objects are loose (extra fields pass) so a relay newer than
 * this package can add fields without breaking a client that checks the output schema.
 */
import { ATTEMPT_TRIGGERS, DEDUPE_FIELD_PATTERN, DEDUPE_HEADER_PATTERN, DEDUPE_SOURCE_MAX_CHARS, ENDPOINT_STATUSES, EVENT_STATUSES, HANDSHAKE_PROVIDERS, HMAC_ALGORITHMS, HMAC_ENCODINGS, HMAC_SIGNED, PLANS, VERIFICATION_MODES, VERIFICATION_PROVIDERS, VERIFICATION_REASONS } from '@hook/core';
import { z } from 'zod';

export const destinationTargetSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('cli') }),
    z.object({ type: z.literal('url'), url: z.string().describe('http(s) URL the relay POSTs each event to, signed') }),
  ])
  .describe('Where events go: {"type":"cli"} (they wait for `hook listen`) or {"type":"url","url":…}');

/** One place an endpoint's events go, with its own secret (not shown), status, rules, limits and health. */
export const destinationSchema = z.looseObject({
  id: z.string().describe('dst_…'),
  endpoint_id: z.string(),
  position: z.number().int().describe('Order among the endpoint\'s destinations; the lowest is the endpoint\'s first'),
  destination: destinationTargetSchema,
  status: z.enum(ENDPOINT_STATUSES).describe('active delivers; paused holds deliveries; disabled gets none'),
  disabled_reason: z.enum(['gone_410', 'failing', 'user']).nullable().describe('Why it is disabled: the URL answered 410, kept failing, or you disabled it; null unless disabled'),
  transformation: z.object({ code: z.string() }).nullable().describe('JavaScript run before each delivery to it, or null'),
  filter: z.record(z.string(), z.unknown()).nullable().describe('The filter deliveries to it must match, or null'),
  rate_per_second: z.number().int().nullable().describe('Most deliveries started per second; null: no limit'),
  max_in_flight: z.number().int().nullable().describe('Most deliveries in flight at once; null: the relay\'s share'),
  health: z.looseObject({
    consecutive_failures: z.number().int().describe('Attempts that failed in a row; 0 after any 2xx'),
    failing_since: z.string().nullable().describe('When the current run of failures began'),
  }),
  created_at: z.string(),
  updated_at: z.string(),
});

export const endpointSchema = z.looseObject({
  id: z.string().describe('ep_…'),
  name: z.string(),
  url: z.string().describe('The ingest URL: webhook providers send events here (no API key needed)'),
  status: z.enum(ENDPOINT_STATUSES),
  destination: destinationTargetSchema.describe('The first destination\'s target'),
  transformation: z.object({ code: z.string() }).nullable().optional().describe('The first destination\'s transformation, or null'),
  filter: z.record(z.string(), z.unknown()).nullable().optional().describe('The first destination\'s filter, or null'),
  destinations: z.array(destinationSchema).optional().describe('Every destination, first first: each event is delivered to each'),
  verification: z.looseObject({
    provider: z.enum(VERIFICATION_PROVIDERS),
    mode: z.enum(VERIFICATION_MODES),
    tolerance_seconds: z.number(),
    secret_set: z.boolean(),
    secret_hint: z.string().describe("The secret's last 4 characters (the secret is never shown)"),
  }).nullable().optional().describe('Signature verification at the ingest URL (docs/sources.md), or null'),
  handshake: z.looseObject({ provider: z.enum(HANDSHAKE_PROVIDERS), secret_set: z.boolean(), secret_hint: z.string().nullable() })
    .nullable().optional().describe('The handshake answered at the ingest URL (docs/sources.md, Handshakes); null when none'),
  dedupe: z.union([z.looseObject({ header: z.string() }), z.looseObject({ json_field: z.string() })])
    .nullable().optional().describe('Where a request\'s dedupe key is, a header (lower-cased) or a JSON field (docs/sources.md, Duplicates); null when every request is stored'),
  response: z.looseObject({ status: z.number(), headers: z.record(z.string(), z.string()), body: z.string() })
    .nullable().optional().describe('What a stored request is answered with (docs/sources.md, Custom responses); null: the default {"id","status"} JSON'),
  created_at: z.string(),
  updated_at: z.string(),
});

/** An endpoint's signature verification as a tool takes it: an object sets it, null turns it off. */
export const verificationInputSchema = z
  .object({
    provider: z.enum(VERIFICATION_PROVIDERS).describe("Whose signature scheme to check; 'hmac' is a generic HMAC described by header, algorithm, encoding, prefix, signed, timestamp_header"),
    secret: z.string().min(1).max(1000).describe('The secret the sender signs with (write-only)'),
    mode: z.enum(VERIFICATION_MODES).optional().describe('reject (default): a failing request gets 401 and is not stored; flag: stored and delivered, marked unverified'),
    tolerance_seconds: z.number().int().min(1).max(86_400).optional().describe('How far a signed timestamp may be from the relay clock (default 300)'),
    header: z.string().optional().describe('hmac: the header carrying the signature'),
    algorithm: z.enum(HMAC_ALGORITHMS).optional(),
    encoding: z.enum(HMAC_ENCODINGS).optional(),
    prefix: z.string().optional().describe('hmac: text before the signature, e.g. "sha256="'),
    signed: z.enum(HMAC_SIGNED).optional().describe('hmac: "body" (default) or "timestamp.body"'),
    timestamp_header: z.string().optional().describe('hmac with signed "timestamp.body": the header carrying the Unix timestamp'),
  })
  .nullable()
  .describe('Check senders\' signatures at the ingest URL (docs/sources.md); null turns it off');

/** An endpoint's handshake as a tool takes it: an object sets it, null turns it off. */
export const handshakeInputSchema = z
  .object({
    provider: z.enum(HANDSHAKE_PROVIDERS).describe('Whose handshake to answer at the ingest URL'),
    secret: z.string().min(1).max(1000).optional().describe('meta: the verify token; zoom: the secret token; twitter: the consumer secret (required for these, refused for the others; write-only)'),
  })
  .nullable()
  .describe('Answer a provider\'s handshake at the ingest URL, stored but not delivered (docs/sources.md, Handshakes); null turns it off');

/** Where an endpoint's dedupe key is, as a tool takes it: one of a header or a JSON field; null turns dedupe off. */
export const dedupeInputSchema = z
  .union([
    z.strictObject({
      header: z.string().min(1).max(DEDUPE_SOURCE_MAX_CHARS).regex(new RegExp(DEDUPE_HEADER_PATTERN)).describe('The header holding the key: X-GitHub-Delivery (GitHub), webhook-id (Standard Webhooks), X-Shopify-Event-Id, Idempotency-Key'),
    }),
    z.strictObject({
      json_field: z.string().min(1).max(DEDUPE_SOURCE_MAX_CHARS).regex(new RegExp(DEDUPE_FIELD_PATTERN)).describe('The JSON body\'s field holding the key, dotted for a nested one: id (Stripe), event_id (Slack), data.id; a string or a number'),
    }),
  ])
  .nullable()
  .describe('Drop duplicates at ingest (docs/sources.md, Duplicates): a request whose key the endpoint already stored is answered {"id": <original event id>, "status": "duplicate"} and not stored, delivered or counted again. null turns it off');

/** An endpoint's custom response as a tool takes it: an object sets it (the whole of it), null restores the default. */
export const responseInputSchema = z
  .object({
    status: z.number().int().min(200).max(299).optional().describe('200–299 (default 200)'),
    headers: z.record(z.string(), z.string()).optional().describe('At most 20; hop-by-hop headers, Content-Length, Content-Encoding, Set-Cookie, Date and Server are refused; without Content-Type a body goes as text/plain'),
    body: z.string().max(4096).optional().describe('At most 4096 UTF-8 bytes; {{event_id}} becomes the stored event\'s id'),
  })
  .nullable()
  .describe('Answer each stored request with this instead of {"id","status"} (docs/sources.md, Custom responses); null restores the default');

/** A destination's limits as a tool takes them: null removes one. */
export const ratePerSecondInput = z.number().int().min(1).max(10_000).nullable().describe('Most deliveries started per second (1–10000); null: no limit');
export const maxInFlightInput = z.number().int().min(1).max(1000).nullable().describe('Most deliveries in flight at once (1–1000); null: the relay\'s per-destination share');

/** An endpoint's transformation as a tool takes it: `{code}` sets it, null removes it. */
export const transformationInputSchema = z
  .object({ code: z.string().min(1).max(65_536).describe("JavaScript registering addHandler('transform', (request, context) => request), at most 64 KiB") })
  .nullable()
  .describe('Reshapes each event before delivery (headers, body, path, query; context.setType sets the event type). null removes it');

/** An endpoint's filter as a tool takes it: `{body?, headers?, query?, path?}` match schemas, null removes it. */
export const filterInputSchema = z
  .record(z.string(), z.unknown())
  .nullable()
  .describe('Which events are delivered: {body?, headers?, query?, path?} with plain values (equality), nested objects, and $eq $neq $gt $gte $lt $lte $in $nin $startsWith $endsWith $exist $and $or $not. Others are stored as status filtered. null removes it');

export const accountSchema = z.looseObject({
  id: z.string().describe('acct_…'),
  plan: z.enum(PLANS),
  email: z.string().nullable().optional().describe('Given at signup; null when none was'),
  allowed_ips: z.array(z.string()).optional().describe('CIDRs API calls must come from; empty allows any address'),
  custom_domain: z.string().nullable().optional().describe("The host the account's endpoint URLs use; null when none"),
  retention_days: z.number().int().nullable().optional().describe("The account's own retention in days (enterprise); null keeps the plan's"),
  created_at: z.string(),
});

const limitSchema = (description: string) => z.number().int().nullable().describe(`${description}; null means unlimited`);

export const planLimitsSchema = z
  .looseObject({
    events_per_month: limitSchema('Events accepted per calendar month (UTC); past it ingest answers 429 quota_exceeded'),
    endpoints: limitSchema('Endpoints the account may have'),
    members: limitSchema('Team members, the first admin included'),
    retention_days: z.number().int().describe('Days event history is kept'),
    api_requests_per_minute: z.number().int().describe('API requests each key may make per minute'),
  })
  .describe('What the plan allows; the relay enforces each figure');

export const usageSchema = z
  .looseObject({
    month: z.string().describe('YYYY-MM (UTC)'),
    events_accepted: z.number().int().describe('Events stored this month (exact)'),
    events_remaining: z.number().int().nullable().describe('null means unlimited'),
    resets_at: z.string(),
    endpoints: z.number().int(),
    members: z.number().int(),
  })
  .describe("This month's usage");

export const planChangeSchema = z.looseObject({
  id: z.string().describe('plch_…'),
  from_plan: z.enum(PLANS),
  to_plan: z.enum(PLANS),
  changed_at: z.string(),
});

/** What get_account and upgrade_plan return: GET /v1/account's JSON. */
export const accountDetailsShape = {
  account: accountSchema,
  limits: planLimitsSchema,
  usage: usageSchema,
  plan_history: z.array(planChangeSchema).describe('Every plan change, newest first'),
};

export const eventSummarySchema = z.looseObject({
  id: z.string().describe('evt_…'),
  endpoint_id: z.string(),
  type: z.string().nullable(),
  method: z.string(),
  path: z.string(),
  query: z.string(),
  headers: z.record(z.string(), z.string()),
  content_type: z.string().nullable(),
  size: z.number().describe('Body size in bytes'),
  received_at: z.string(),
  status: z.enum(EVENT_STATUSES),
  attempt_count: z.number(),
  next_attempt_at: z.string().nullable(),
  verification: z.object({ provider: z.enum(VERIFICATION_PROVIDERS), verified: z.boolean(), reason: z.enum(VERIFICATION_REASONS).nullable() })
    .nullable().optional().describe("What the endpoint's signature verification found; null when it verifies nothing"),
  handshake: z.enum(HANDSHAKE_PROVIDERS).nullable().optional().describe('The provider whose handshake this request was: answered at ingest, not delivered; null otherwise'),
  dedupe_key: z.string().nullable().optional().describe('The dedupe key it was stored under (docs/sources.md, Duplicates); a key over 200 characters is kept as sha256:<hex>; null when none'),
});

export const attemptSchema = z.looseObject({
  id: z.string(),
  destination_id: z.string().nullable().optional().describe('The destination it went to (dst_…)'),
  n: z.number(),
  trigger: z.enum(ATTEMPT_TRIGGERS),
  started_at: z.string(),
  duration_ms: z.number(),
  response_status: z.number().nullable(),
  response_body: z.string().nullable(),
  error: z.string().nullable(),
});

export const deliverySchema = z.looseObject({
  destination_id: z.string().describe('dst_…'),
  destination: destinationTargetSchema,
  status: z.enum(EVENT_STATUSES).describe('The event\'s status at this destination'),
  attempt_count: z.number(),
  next_attempt_at: z.string().nullable(),
  next_trigger: z.enum(['auto', 'replay']).describe('replay: a replay is queued for it'),
});

export const eventSchema = eventSummarySchema.extend({
  body: z.string().describe('The exact body: text when it is valid UTF-8, else base64 (see body_encoding)'),
  body_encoding: z.enum(['utf8', 'base64']),
  attempts: z.array(attemptSchema).describe('Every attempt to every destination, oldest first'),
  deliveries: z.array(deliverySchema).optional().describe('One per destination: its own status, attempts and retries'),
});

export const pageFields = {
  next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
};

export const limitInput = z.number().int().min(1).max(100).optional().describe('Items per page, 1–100 (default 20)');
export const cursorInput = z.string().optional().describe('`next_cursor` of the previous page');

export const memberRoleSchema = z.enum(['admin', 'member']).describe('admin: may also manage members, other members\' keys and the plan; member: everything else');

export const memberSchema = z.looseObject({
  id: z.string().describe('mem_…'),
  email: z.string().nullable().describe("The member's address; null for an account's first admin made without one"),
  role: memberRoleSchema,
  created_at: z.string(),
});

/** The account's notification destination, without its signing secret (secrets stay out of model context). */
export const notificationSettingsSchema = z.looseObject({
  url: z.string().describe('Where the account\'s notifications are POSTed, signed'),
  status: z.enum(ENDPOINT_STATUSES).describe('active; disabled after the URL answered 410 (set it again to resume)'),
  created_at: z.string(),
  updated_at: z.string(),
});
