/**
 * The route schemas: one source for request validation, response serialisation and
 * /openapi.json.
 */
import { Type, type TSchema } from 'typebox';
import { ATTEMPT_TRIGGERS, ENDPOINT_STATUSES, EVENT_STATUSES, idPattern, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, PLANS, HMAC_ALGORITHMS, HMAC_ENCODINGS, HMAC_SIGNED, VERIFICATION_MODES, VERIFICATION_PROVIDERS, VERIFICATION_REASONS, DEFAULT_TOLERANCE_SECONDS, RESPONSE_EVENT_ID_PLACEHOLDER, RESPONSE_MAX_BODY_BYTES, RESPONSE_MAX_HEADER_VALUE, RESPONSE_MAX_HEADERS, RESPONSE_STATUS_MAX, RESPONSE_STATUS_MIN, HANDSHAKE_PROVIDERS, type IdKind, DEDUPE_FIELD_PATTERN, DEDUPE_HEADER_PATTERN, DEDUPE_SOURCE_MAX_CHARS } from '@hook/core';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC, ending in Z' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export function IdOf(kind: IdKind, description: string) {
  return Type.String({ pattern: idPattern(kind), description, examples: [`${idPattern(kind).slice(1, idPattern(kind).indexOf('_') + 1)}01JD2Y0Z3M4N5P6Q7R8S9TVWXY`] });
}

export const FieldErrorSchema = Type.Object({
  field: Type.String({ description: 'Where the problem is, e.g. body.name or query.limit' }),
  message: Type.String(),
});

/** RFC 9457 problem details plus Hook's code, fix and request id. */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable snake_case error code; every code is listed in docs/errors.md' }),
    fix: Type.String({ description: 'How to fix it' }),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
    request_id: Type.String(),
  },
  { description: 'application/problem+json (RFC 9457)' },
);

/** Error responses every route can give. */
export const errorResponses = {
  '4XX': { description: 'A client error', content: { 'application/problem+json': { schema: Problem } } },
  '5XX': { description: 'A server error', content: { 'application/problem+json': { schema: Problem } } },
} as const;

export const Plan = Type.Enum([...PLANS]);

export const AccountSchema = Type.Object({
  id: IdOf('account', 'Account id'),
  plan: Plan,
  email: Type.Union([Type.String({ format: 'email' }), Type.Null()], { description: 'Given at signup; null when none was' }),
  allowed_ips: Type.Array(Type.String(), { description: 'CIDRs API requests must come from (canonical form); empty allows any address. Ingest URLs are not affected' }),
  custom_domain: Type.Union([Type.String(), Type.Null()], { description: "A hostname the account's endpoint URLs use instead of the relay's; null when none" }),
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

export const ApiKeySchema = Type.Object({
  id: IdOf('apiKey', 'Key id'),
  name: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
  member_id: IdOf('member', 'The member the key belongs to; it acts with that member\'s role'),
  created_at: Timestamp,
});

export const CreatedApiKeySchema = Type.Object({
  ...ApiKeySchema.properties,
  api_key: Type.String({ description: 'The key itself (hk_…). Shown only in this response.' }),
});

/** A name for a key or an endpoint: not empty, not only spaces. */
export const ResourceName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: '1 to 200 characters, not only spaces' });

/** A URL that receives signed POSTs (endpoint destinations, the notification URL). */
export const DestinationUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'An http or https URL that receives signed POSTs' });

/**
 * Where events go: `{type:"cli"}` (they wait for `hook listen`) or `{type:"url", url}`.
 * One object with if/then rather than a union, so a mistake gets one precise error.
 */
export const Destination = Type.Object(
  {
    type: Type.Enum(['cli', 'url']),
    url: Type.Optional({ ...DestinationUrl, description: 'Required with type url: an http or https URL that receives signed POSTs' }),
  },
  {
    additionalProperties: false,
    if: { type: 'object', properties: { type: { const: 'url' } } },
    then: { required: ['url'] },
    else: { not: { required: ['url'] } },
    description: 'Where events go',
  },
);

export const EndpointStatus = Type.Enum([...ENDPOINT_STATUSES]);

/** Most bytes of an endpoint's transformation code. */
export const TRANSFORMATION_CODE_MAX_BYTES = 64 * 1024;

/** An endpoint's transformation: JavaScript registering `addHandler('transform', …)` (docs/transformations.md); null removes it. */
export const TransformationInput = Type.Union([
  Type.Object(
    { code: Type.String({ minLength: 1, maxLength: TRANSFORMATION_CODE_MAX_BYTES, description: 'JavaScript source, at most 64 KiB' }) },
    { additionalProperties: false },
  ),
  Type.Null(),
], { description: 'JavaScript run before each delivery (docs/transformations.md); null removes it' });

/** An endpoint's filter: `{body?, headers?, query?, path?}` in the match syntax of docs/filters.md; null removes it. */
export const FilterInput = Type.Union([
  Type.Object({}, { additionalProperties: true, description: '{body?, headers?, query?, path?}: match schemas (docs/filters.md)' }),
  Type.Null(),
], { description: 'Which events are delivered (docs/filters.md); others are stored as filtered. null removes it' });

const TransformationSchema = Type.Union([Type.Object({ code: Type.String() }), Type.Null()], { description: 'The transformation run before each delivery, or null' });
const FilterSchema = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The filter deliveries must match, or null' });

/** A destination's limits as the API takes them; null removes one. */
export const RatePerSecondInput = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000 }), Type.Null()], { description: 'Most deliveries started per second (1 to 10000); null: no limit' });
export const MaxInFlightInput = Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], { description: 'Most deliveries in flight at once (1 to 1000, never more than the relay\'s per-destination share); null: the share' });

export const DestinationStatus = Type.Enum([...ENDPOINT_STATUSES], { description: 'active delivers; paused holds deliveries until active again; disabled: stopped by the relay (410 Gone, or failing too long) or by you' });

export const DestinationSchema = Type.Object({
  id: IdOf('destination', 'Destination id'),
  endpoint_id: IdOf('endpoint', 'Its endpoint'),
  position: Type.Integer({ minimum: 0, description: 'Order among the endpoint\'s destinations; the lowest is its first, which the endpoint\'s own destination, transformation, filter and secret fields read and write' }),
  destination: Destination,
  status: DestinationStatus,
  disabled_reason: Type.Union([Type.Enum(['gone_410', 'failing', 'user']), Type.Null()], { description: 'Why it is disabled: gone_410, failing (docs/delivery.md#destination-health) or user' }),
  transformation: TransformationSchema,
  filter: FilterSchema,
  rate_per_second: Type.Union([Type.Integer(), Type.Null()]),
  max_in_flight: Type.Union([Type.Integer(), Type.Null()]),
  health: Type.Object({
    consecutive_failures: Type.Integer({ description: 'Attempts that failed in a row; 0 after any 2xx' }),
    failing_since: Type.Union([Timestamp, Type.Null()], { description: 'When the current run of failures began' }),
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const verificationFields = {
  provider: Type.Enum([...VERIFICATION_PROVIDERS], { description: "Whose signature scheme to check (docs/sources.md); 'hmac' is a generic HMAC described by the fields below" }),
  mode: Type.Enum([...VERIFICATION_MODES], { description: 'reject: a failing request is answered 401 signature_invalid and not stored; flag: it is stored and delivered, marked unverified' }),
  tolerance_seconds: Type.Integer({ minimum: 1, maximum: 86_400, description: `How far a signed timestamp may be from the relay's clock (stripe, slack, standard-webhooks, hmac with signed timestamp.body); default ${DEFAULT_TOLERANCE_SECONDS}` }),
  header: Type.String({ minLength: 1, maxLength: 200, pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$', description: 'hmac: the header carrying the signature' }),
  algorithm: Type.Enum([...HMAC_ALGORITHMS], { description: 'hmac: the hash (default sha256)' }),
  encoding: Type.Enum([...HMAC_ENCODINGS], { description: 'hmac: how the signature is written (default hex)' }),
  prefix: Type.String({ maxLength: 100, description: 'hmac: text before the signature in the header, e.g. "sha256="; default none' }),
  signed: Type.Enum([...HMAC_SIGNED], { description: 'hmac: what is signed: the body, or "<timestamp>." then the body (default body)' }),
  timestamp_header: Type.String({ minLength: 1, maxLength: 200, pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$', description: 'hmac with signed timestamp.body: the header carrying the Unix timestamp' }),
};

export const VerificationInput = Type.Union([
  Type.Object({
    provider: verificationFields.provider,
    secret: Type.String({ minLength: 1, maxLength: 1000, description: 'The secret the sender signs with (write-only: never returned)' }),
    mode: Type.Optional({ ...verificationFields.mode, default: 'reject' }),
    tolerance_seconds: Type.Optional(verificationFields.tolerance_seconds),
    header: Type.Optional(verificationFields.header),
    algorithm: Type.Optional(verificationFields.algorithm),
    encoding: Type.Optional(verificationFields.encoding),
    prefix: Type.Optional(verificationFields.prefix),
    signed: Type.Optional(verificationFields.signed),
    timestamp_header: Type.Optional(verificationFields.timestamp_header),
  }, { additionalProperties: false }),
  Type.Null(),
], { description: 'Check each request\'s signature at the ingest URL (docs/sources.md); null turns it off' });

export const VerificationSchema = Type.Union([
  Type.Object({
    provider: verificationFields.provider,
    mode: verificationFields.mode,
    tolerance_seconds: verificationFields.tolerance_seconds,
    header: Type.Optional(verificationFields.header),
    algorithm: Type.Optional(verificationFields.algorithm),
    encoding: Type.Optional(verificationFields.encoding),
    prefix: Type.Optional(verificationFields.prefix),
    signed: Type.Optional(verificationFields.signed),
    timestamp_header: Type.Optional(verificationFields.timestamp_header),
    secret_set: Type.Boolean({ description: 'A secret is stored (it is never shown)' }),
    secret_hint: Type.String({ description: "The secret's last 4 characters, to tell which one is set" }),
  }),
  Type.Null(),
], { description: 'Signature verification at the ingest URL (docs/sources.md); null when off' });

const responseFields = {
  status: Type.Integer({ minimum: RESPONSE_STATUS_MIN, maximum: RESPONSE_STATUS_MAX, description: `The status a stored request is answered with (${RESPONSE_STATUS_MIN}–${RESPONSE_STATUS_MAX})` }),
  headers: Type.Record(Type.String(), Type.String(), { description: `Headers sent with it, at most ${RESPONSE_MAX_HEADERS}, values at most ${RESPONSE_MAX_HEADER_VALUE} characters; hop-by-hop headers, Content-Length, Content-Encoding, Set-Cookie, Date and Server are refused. Without Content-Type a body goes as text/plain; charset=utf-8` }),
  body: Type.String({ maxLength: RESPONSE_MAX_BODY_BYTES, description: `UTF-8 text, at most ${RESPONSE_MAX_BODY_BYTES} bytes; ${RESPONSE_EVENT_ID_PLACEHOLDER} is replaced by the stored event's id` }),
};

export const ResponseInput = Type.Union([
  Type.Object({
    status: Type.Optional({ ...responseFields.status, default: 200 }),
    headers: Type.Optional(responseFields.headers),
    body: Type.Optional(responseFields.body),
  }, { additionalProperties: false }),
  Type.Null(),
], { description: 'What a stored request is answered with instead of {"id","status"} (docs/sources.md, Custom responses); refusals are answered as always; null restores the default' });

export const ResponseSchema = Type.Union([
  Type.Object({ status: responseFields.status, headers: responseFields.headers, body: responseFields.body }),
  Type.Null(),
], { description: 'The custom answer to a stored request (docs/sources.md, Custom responses); null: the default {"id","status"} JSON' });

export const HandshakeInput = Type.Union([
  Type.Object({
    provider: Type.Enum([...HANDSHAKE_PROVIDERS], { description: 'Whose handshake to answer at the ingest URL (docs/sources.md, Handshakes)' }),
    secret: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: "meta: the verify token; zoom: the app's secret token; twitter: the consumer secret (required for these three, refused for the others; write-only)" })),
  }, { additionalProperties: false }),
  Type.Null(),
], { description: 'Answer a provider\'s handshake at the ingest URL (docs/sources.md, Handshakes); null turns it off' });

export const HandshakeSchema = Type.Union([
  Type.Object({
    provider: Type.Enum([...HANDSHAKE_PROVIDERS]),
    secret_set: Type.Boolean({ description: 'A secret is stored (never shown)' }),
    secret_hint: Type.Union([Type.String(), Type.Null()], { description: "The secret's last 4 characters; null without one" }),
  }),
  Type.Null(),
], { description: 'The handshake answered at the ingest URL (docs/sources.md, Handshakes); null when none' });

const DedupeHeader = Type.Object({
  header: Type.String({ minLength: 1, maxLength: DEDUPE_SOURCE_MAX_CHARS, pattern: DEDUPE_HEADER_PATTERN, description: 'The header holding the key, e.g. X-GitHub-Delivery, webhook-id, Idempotency-Key (shown lower-cased)' }),
}, { additionalProperties: false });
const DedupeField = Type.Object({
  json_field: Type.String({ minLength: 1, maxLength: DEDUPE_SOURCE_MAX_CHARS, pattern: DEDUPE_FIELD_PATTERN, description: "The JSON body's field holding the key, dotted for a nested one: id (Stripe), data.id; a string or number" }),
}, { additionalProperties: false });

export const DedupeInput = Type.Union([DedupeHeader, DedupeField, Type.Null()], {
  description: 'Drop duplicates (docs/sources.md, Duplicates): where a request\'s key is, a header or a JSON field; a request whose key the endpoint already stored is answered with the original event\'s id and not stored or delivered again. null turns it off',
});

export const DedupeSchema = Type.Union([DedupeHeader, DedupeField, Type.Null()], {
  description: 'Where a request\'s dedupe key is (docs/sources.md, Duplicates); null when every request is stored',
});

export const EndpointSchema = Type.Object({
  id: IdOf('endpoint', 'Endpoint id'),
  name: Type.String(),
  url: Type.String({ description: 'The ingest URL: send events here' }),
  status: EndpointStatus,
  destination: { ...Destination, description: 'Where events go: the first destination\'s' },
  transformation: TransformationSchema,
  filter: FilterSchema,
  destinations: Type.Array(DestinationSchema, { description: 'Every destination, first first: each event is delivered to each' }),
  verification: VerificationSchema,
  response: ResponseSchema,
  handshake: HandshakeSchema,
  dedupe: DedupeSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SecretSchema = Type.Object({
  secret: Type.String({ description: 'Current signing secret, whsec_…' }),
  previous_secret: Type.Union([Type.String(), Type.Null()], { description: 'The secret rotated out, still signing until previous_secret_expires_at' }),
  previous_secret_expires_at: NullableTimestamp,
});

export const EventStatus = Type.Enum([...EVENT_STATUSES]);

export const AttemptSchema = Type.Object({
  id: IdOf('attempt', 'Attempt id'),
  destination_id: Type.Union([IdOf('destination', 'The destination it went to'), Type.Null()]),
  n: Type.Integer({ minimum: 1 }),
  trigger: Type.Enum([...ATTEMPT_TRIGGERS]),
  started_at: Timestamp,
  duration_ms: Type.Integer(),
  response_status: Type.Union([Type.Integer(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const DeliverySchema = Type.Object({
  destination_id: IdOf('destination', 'Destination id'),
  destination: Destination,
  status: EventStatus,
  attempt_count: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  next_trigger: Type.Enum(['auto', 'replay'], { description: 'replay: a replay is queued for it' }),
}, { description: 'The event on its way to one destination' });

export const VerificationResultSchema = Type.Object({
  provider: Type.Enum([...VERIFICATION_PROVIDERS]),
  verified: Type.Boolean(),
  reason: Type.Union([Type.Enum([...VERIFICATION_REASONS]), Type.Null()], { description: 'Why it failed; null when verified' }),
});

const eventSummaryProperties = {
  id: IdOf('event', 'Event id'),
  endpoint_id: IdOf('endpoint', 'Endpoint that received it'),
  type: Type.Union([Type.String(), Type.Null()], { description: 'From the x-event-type header, else a top-level JSON "type" field' }),
  method: Type.String(),
  path: Type.String({ description: 'The path after the ingest URL, "" when none' }),
  query: Type.String({ description: 'The raw query string, without "?"' }),
  headers: Type.Record(Type.String(), Type.String(), { description: 'Request headers, names lower-cased' }),
  content_type: Type.Union([Type.String(), Type.Null()]),
  size: Type.Integer({ description: 'Body size in bytes' }),
  received_at: Timestamp,
  status: EventStatus,
  attempt_count: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  verification: Type.Union([VerificationResultSchema, Type.Null()], { description: "What the endpoint's signature verification found (docs/sources.md); null when the endpoint verifies nothing" }),
  handshake: Type.Union([Type.Enum([...HANDSHAKE_PROVIDERS]), Type.Null()], { description: 'The provider whose handshake this request was: answered at the ingest URL and not delivered (status filtered, no deliveries; docs/sources.md, Handshakes); null otherwise' }),
  dedupe_key: Type.Union([Type.String(), Type.Null()], { description: 'The key it was stored under when its endpoint drops duplicates (docs/sources.md, Duplicates); a key longer than 200 characters is kept as sha256:<hex>; null when it had none' }),
};

export const EventSummarySchema = Type.Object(eventSummaryProperties, { description: 'An event without its body; GET /v1/events/{id} has the body' });

export const EventSchema = Type.Object({
  ...eventSummaryProperties,
  body: Type.String({ description: 'The exact body: text when valid UTF-8, else base64' }),
  body_encoding: Type.Enum(['utf8', 'base64']),
  attempts: Type.Array(AttemptSchema, { description: 'Every attempt to every destination, oldest first' }),
  deliveries: Type.Array(DeliverySchema, { description: 'One per destination: its own status, attempts and retries' }),
});

export const IngestAccepted = Type.Object({
  id: IdOf('event', 'The stored event; for a duplicate, the event first stored under its key'),
  status: Type.Union([EventStatus, Type.Literal('duplicate')], { description: 'pending; duplicate when the endpoint drops duplicates and already stored this key (docs/sources.md, Duplicates): nothing was stored' }),
});

export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last page' }),
  });
}

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export function IdParams(kind: IdKind, description: string) {
  return Type.Object({ id: IdOf(kind, description) });
}

export const MemberRole = Type.Enum(['admin', 'member'], { description: 'admin: may also manage members, API keys of others and the plan; member: everything else' });

export const MemberSchema = Type.Object({
  id: IdOf('member', 'Member id'),
  email: Type.Union([Type.String({ format: 'email' }), Type.Null()], { description: "The member's address; null for an account's first admin made without one" }),
  role: MemberRole,
  created_at: Timestamp,
});

/** What `POST /v1/members` answers: the member and its first API key, shown once. */
export const CreatedMemberSchema = Type.Object({
  member: MemberSchema,
  api_key: Type.String({ description: "The new member's first API key (hk_…). Shown only in this response: hand it to the member." }),
});
