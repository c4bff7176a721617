/** Endpoints, their destinations and the settings they are made and changed with. */
import { Type } from 'typebox';
import { DEDUPE_FIELD_PATTERN, DEDUPE_HEADER_PATTERN, DEDUPE_SOURCE_MAX_CHARS } from '../dedupe.ts';
import { ENDPOINT_STATUSES } from '../events.ts';
import { HANDSHAKE_PROVIDERS, VERIFICATION_PROVIDERS } from '../providers/index.ts';
import { RESPONSE_EVENT_ID_PLACEHOLDER, RESPONSE_MAX_BODY_BYTES, RESPONSE_MAX_HEADER_VALUE, RESPONSE_MAX_HEADERS, RESPONSE_STATUS_MAX, RESPONSE_STATUS_MIN } from '../responses.ts';
import { DEFAULT_TOLERANCE_SECONDS, HMAC_ALGORITHMS, HMAC_ENCODINGS, HMAC_SIGNED, VERIFICATION_MODES } from '../verification.ts';
import { DELIVERY_DELAY_MAX_SECONDS, ORDERING_ON_GIVE_UP, SIGNATURE_SCHEMES } from '../destination-options.ts';
import { IdOf, ResourceName, Timestamp } from './common.ts';

/** A queue destination's name fields (an exchange, routing key, subject, stream or topic): printable text. */
const QueueName = (description: string) => Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s\\u0000]+$', description });
/** An exchange may be '' (RabbitMQ's default exchange, which routes by queue name). */
const ExchangeName = Type.String({ maxLength: 255, pattern: '^[^\\s\\u0000]*$', description: "amqp: the exchange to publish to ('' is the default exchange, which routes to the queue named by routing_key)" });

/** Each type's required fields, and the scheme its URL must have. */
const TARGET_RULES: ReadonlyArray<{ type: string; required: string[]; scheme: string }> = [
  { type: 'url', required: ['url'], scheme: '^https?://' },
  { type: 'amqp', required: ['url', 'exchange', 'routing_key'], scheme: '^amqps?://' },
  { type: 'nats', required: ['url', 'subject'], scheme: '^(nats|tls)://' },
  { type: 'redis', required: ['url', 'stream'], scheme: '^rediss?://' },
  { type: 'mqtt', required: ['url', 'topic'], scheme: '^mqtts?://' },
];

/** The fields each type takes beside `type`; any other is refused (checked in the relay with a message naming the type). */
export const DESTINATION_TARGET_FIELDS: Readonly<Record<string, readonly string[]>> = {
  cli: [],
  url: ['url'],
  amqp: ['url', 'exchange', 'routing_key'],
  nats: ['url', 'subject'],
  redis: ['url', 'stream', 'max_len'],
  mqtt: ['url', 'topic'],
};

/**
 * Where events go: `{type:"cli"}` (they wait for `hook listen`), `{type:"url", url}`, or a
 * broker (docs/delivery.md#queue-destinations): `{type:"amqp", url, exchange,
 * routing_key}`, `{type:"nats", url, subject}`, `{type:"redis", url, stream, max_len?}`,
 * `{type:"mqtt", url, topic}`. One object with if/then rules rather than a union, so a
 * mistake gets one precise error; its static type says the same as a union (JSON Schema's
 * if/then is not read by `Static`).
 */
export const Destination = Type.Unsafe<
  | { type: 'cli' }
  | { type: 'url'; url: string }
  | { type: 'amqp'; url: string; exchange: string; routing_key: string }
  | { type: 'nats'; url: string; subject: string }
  | { type: 'redis'; url: string; stream: string; max_len?: number | null }
  | { type: 'mqtt'; url: string; topic: string }
>(Type.Object(
  {
    type: Type.Enum(['cli', 'url', 'amqp', 'nats', 'redis', 'mqtt'], { description: 'url: signed POSTs; cli: held for hook listen; amqp, nats, redis, mqtt: a message to a broker' }),
    url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048, description: 'url: an http or https URL that receives signed POSTs; amqp, nats, redis, mqtt: the broker (amqp://host:5672/vhost, nats://host:4222, redis://host:6379/0, mqtt://host:1883; amqps, tls, rediss, mqtts for TLS), without a password (auth basic carries it)' })),
    exchange: Type.Optional(ExchangeName),
    routing_key: Type.Optional(Type.String({ maxLength: 255, description: 'amqp: the routing key each message is published with' })),
    subject: Type.Optional(QueueName('nats: the JetStream subject each message is published to (a stream must capture it)')),
    stream: Type.Optional(QueueName('redis: the stream each message is added to (XADD)')),
    max_len: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], { description: 'redis: trim the stream to about this many entries (XADD MAXLEN ~); null: no cap' })),
    topic: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: '^[^#+\\u0000]+$', description: 'mqtt: the topic each message is published to, QoS 1 (no wildcards)' })),
  },
  {
    additionalProperties: false,
    allOf: TARGET_RULES.map(({ type, required, scheme }) => ({
      if: { type: 'object', properties: { type: { const: type } } },
      then: { required, properties: { url: { type: 'string', pattern: scheme } } },
    })),
    if: { type: 'object', properties: { type: { const: 'cli' } } },
    then: { not: { required: ['url'] } },
    description: 'Where events go',
  },
));

/** How a destination signs in to its receiver (docs/delivery.md#destination-auth). Secrets are write-only. */
export const AuthInput = Type.Union([
  Type.Object({
    type: Type.Literal('basic'),
    username: Type.String({ maxLength: 200, pattern: '^[^:]*$', description: 'The user name (no colon)' }),
    password: Type.String({ maxLength: 1000, description: 'The password (write-only)' }),
  }, { additionalProperties: false }),
  Type.Object({
    type: Type.Literal('bearer'),
    token: Type.String({ minLength: 1, maxLength: 8192, description: 'Sent as Authorization: Bearer <token> (write-only)' }),
  }, { additionalProperties: false }),
  Type.Object({
    type: Type.Literal('headers'),
    headers: Type.Record(Type.String({ pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$' }), Type.String({ maxLength: 8192 }), { minProperties: 1, maxProperties: 20, description: 'Static headers sent with every delivery, e.g. {"x-api-key": "…"} (values write-only); they cannot replace the signature headers' }),
  }, { additionalProperties: false }),
  Type.Object({
    type: Type.Literal('oauth2'),
    token_url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'The OAuth2 token endpoint (client credentials grant)' }),
    client_id: Type.String({ minLength: 1, maxLength: 1000 }),
    client_secret: Type.String({ minLength: 1, maxLength: 4096, description: 'write-only' }),
    scope: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()])),
    audience: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()])),
  }, { additionalProperties: false }),
  Type.Null(),
], { description: 'How deliveries sign in to the receiver (docs/delivery.md#destination-auth): basic, bearer, static headers or OAuth2 client credentials; a queue destination takes basic (the broker\'s user and password). null removes it' });

/** A destination's auth as shown: no secret, only that one is set. */
export const AuthSchema = Type.Union([
  Type.Object({
    type: Type.Enum(['basic', 'bearer', 'headers', 'oauth2']),
    username: Type.Optional(Type.String()),
    header_names: Type.Optional(Type.Array(Type.String())),
    token_url: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    scope: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    audience: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    secret_set: Type.Literal(true, { description: 'Its secret part (password, token, header values, client secret) is stored, never shown' }),
  }),
  Type.Null(),
], { description: 'How deliveries sign in (docs/delivery.md#destination-auth); null: they do not' });

const Pem = (description: string) => Type.String({ minLength: 1, maxLength: 65_536, pattern: '-----BEGIN ', description });

/** mTLS and a private CA (docs/delivery.md#mtls). */
export const TlsInput = Type.Union([
  Type.Object({
    client_certificate: Type.Optional(Type.Union([Pem('The client certificate presented to the receiver, PEM (its chain after it)'), Type.Null()])),
    client_key: Type.Optional(Type.Union([Pem('Its private key, PEM (write-only)'), Type.Null()])),
    ca: Type.Optional(Type.Union([Pem('CA certificates to trust for the receiver, PEM, instead of the public ones'), Type.Null()])),
  }, { additionalProperties: false }),
  Type.Null(),
], { description: 'TLS settings for an https (or TLS broker) destination: a client certificate and key (mTLS), a CA to trust (docs/delivery.md#mtls); null removes them' });

export const TlsSchema = Type.Union([
  Type.Object({
    client_certificate: Type.Union([Type.String(), Type.Null()]),
    client_key_set: Type.Boolean({ description: 'A client key is stored (never shown)' }),
    ca: Type.Union([Type.String(), Type.Null()]),
  }),
  Type.Null(),
], { description: 'TLS settings (docs/delivery.md#mtls); null: none' });

const OrderingKey = Type.Union([
  Type.Object({ header: Type.String({ minLength: 1, maxLength: DEDUPE_SOURCE_MAX_CHARS, pattern: DEDUPE_HEADER_PATTERN, description: 'The header holding the ordering key (shown lower-cased)' }) }, { additionalProperties: false }),
  Type.Object({ json_field: Type.String({ minLength: 1, maxLength: DEDUPE_SOURCE_MAX_CHARS, pattern: DEDUPE_FIELD_PATTERN, description: "The JSON body's field holding the key, dotted for a nested one" }) }, { additionalProperties: false }),
  Type.Null(),
], { description: 'Where each event\'s ordering key is, a header or a JSON field; events without one share the key "". null: one order for every event' });

export const OrderingInput = Type.Union([
  Type.Object({
    key: Type.Optional(OrderingKey),
    on_give_up: Type.Optional(Type.Enum([...ORDERING_ON_GIVE_UP], { default: 'block', description: 'When an event fails all its attempts: block holds its key until you replay or unblock it; skip goes on to the next' })),
  }, { additionalProperties: false }),
  Type.Null(),
], { description: 'Ordered delivery (docs/delivery.md#ordered-delivery): within a key, an event is not attempted until the one before it succeeded or gave up. null: unordered' });

export const OrderingSchema = Type.Union([
  Type.Object({ key: OrderingKey, on_give_up: Type.Enum([...ORDERING_ON_GIVE_UP]) }),
  Type.Null(),
], { description: 'How deliveries are ordered (docs/delivery.md#ordered-delivery); null: unordered' });

export const SignatureSchemeSchema = Type.Enum([...SIGNATURE_SCHEMES], { description: 'v1: HMAC-SHA256 with a whsec_ secret; v1a: ed25519 with a key pair, verified with the public_key (Standard Webhooks)' });

export const DelaySecondsInput = Type.Union([Type.Integer({ minimum: 1, maximum: DELIVERY_DELAY_MAX_SECONDS }), Type.Null()], {
  description: `Hold each event this many seconds (1 to ${DELIVERY_DELAY_MAX_SECONDS}, 24 h) before its first attempt; null: deliver at once`,
});

export const EndpointStatus = Type.Enum([...ENDPOINT_STATUSES]);

/** Most bytes of an endpoint's transformation code. */
export const TRANSFORMATION_CODE_MAX_BYTES = 64 * 1024;

/** An endpoint's transformation: JavaScript registering `addHandler('transform', …)` (docs/transformations.md); null removes it. */
export const TransformationInput = Type.Union([
  Type.Object(
    { code: Type.String({ minLength: 1, maxLength: TRANSFORMATION_CODE_MAX_BYTES, description: "JavaScript registering addHandler('transform', (request, context) => request), at most 64 KiB" }) },
    { additionalProperties: false },
  ),
  Type.Null(),
], { description: 'JavaScript run before each delivery (docs/transformations.md); null removes it' });

/** An endpoint's filter: `{body?, headers?, query?, path?}` in the match syntax of docs/filters.md; null removes it. */
export const FilterInput = Type.Union([
  Type.Object({}, { additionalProperties: true, description: '{body?, headers?, query?, path?}: match schemas (docs/filters.md): plain values (equality), nested objects, and $eq $neq $gt $gte $lt $lte $in $nin $startsWith $endsWith $exist $and $or $not' }),
  Type.Null(),
], { description: 'Which events are delivered (docs/filters.md); others are stored as filtered. null removes it' });

export const TransformationSchema = Type.Union([Type.Object({ code: Type.String() }), Type.Null()], { description: 'The transformation run before each delivery, or null' });
export const FilterSchema = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The filter deliveries must match, or null' });

/** A destination's limits as the API takes them; null removes one. */
export const RatePerSecondInput = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000 }), Type.Null()], { description: 'Most deliveries started per second (1 to 10000); null: no limit' });
export const MaxInFlightInput = Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], { description: 'Most deliveries in flight at once (1 to 1000, never more than the relay\'s per-destination share); null: the share' });

export const DestinationStatus = Type.Enum([...ENDPOINT_STATUSES], { description: 'active delivers; paused holds deliveries until active again; disabled: stopped by the relay (410 Gone, or failing too long) or by you' });

export const DestinationDisabledReason = Type.Enum(['gone_410', 'failing', 'user']);

export const DestinationHealthSchema = Type.Object({
  consecutive_failures: Type.Integer({ description: 'Attempts that failed in a row; 0 after any 2xx' }),
  failing_since: Type.Union([Timestamp, Type.Null()], { description: 'When the current run of failures began' }),
});

/** One place an endpoint's events go, with its own signing secret (not shown), status, rules, limits and health. */
export const DestinationSchema = Type.Object({
  id: IdOf('destination', 'Destination id'),
  endpoint_id: IdOf('endpoint', 'Its endpoint'),
  position: Type.Integer({ minimum: 0, description: 'Order among the endpoint\'s destinations; the lowest is its first, which the endpoint\'s own destination, transformation, filter and secret fields read and write' }),
  destination: Destination,
  status: DestinationStatus,
  disabled_reason: Type.Union([DestinationDisabledReason, Type.Null()], { description: 'Why it is disabled: gone_410, failing (docs/delivery.md#destination-health) or user' }),
  transformation: TransformationSchema,
  filter: FilterSchema,
  rate_per_second: Type.Union([Type.Integer(), Type.Null()], { description: 'Most deliveries started per second; null: no limit' }),
  max_in_flight: Type.Union([Type.Integer(), Type.Null()], { description: 'Most deliveries in flight at once; null: the relay\'s per-destination share' }),
  auth: AuthSchema,
  tls: TlsSchema,
  signature_scheme: SignatureSchemeSchema,
  public_key: Type.Union([Type.String(), Type.Null()], { description: 'v1a: the whpk_ public key receivers verify with; null for v1' }),
  ordering: OrderingSchema,
  delay_seconds: Type.Union([Type.Integer(), Type.Null()], { description: 'Seconds each event is held before its first attempt; null: none' }),
  health: DestinationHealthSchema,
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

/** The generic HMAC's settings, optional in what is set and in what is shown. */
const hmacFields = {
  header: Type.Optional(verificationFields.header),
  algorithm: Type.Optional(verificationFields.algorithm),
  encoding: Type.Optional(verificationFields.encoding),
  prefix: Type.Optional(verificationFields.prefix),
  signed: Type.Optional(verificationFields.signed),
  timestamp_header: Type.Optional(verificationFields.timestamp_header),
};

export const VerificationInput = Type.Union([
  Type.Object({
    provider: verificationFields.provider,
    secret: Type.String({ minLength: 1, maxLength: 1000, description: 'The secret the sender signs with (write-only: never returned)' }),
    mode: Type.Optional({ ...verificationFields.mode, default: 'reject' }),
    tolerance_seconds: Type.Optional(verificationFields.tolerance_seconds),
    ...hmacFields,
  }, { additionalProperties: false }),
  Type.Null(),
], { description: 'Check each request\'s signature at the ingest URL (docs/sources.md); null turns it off' });

export const VerificationSchema = Type.Union([
  Type.Object({
    provider: verificationFields.provider,
    mode: verificationFields.mode,
    tolerance_seconds: verificationFields.tolerance_seconds,
    ...hmacFields,
    secret_set: Type.Literal(true, { description: 'A secret is stored (it is never shown); always true' }),
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

/** `GET /v1/endpoints/{id}/destinations`: every destination of the endpoint, first first. */
export const DestinationListSchema = Type.Object({ data: Type.Array(DestinationSchema) });

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

/** `POST /v1/endpoints` body. */
export const EndpointCreateSchema = Type.Object({
  name: ResourceName,
  destination: Type.Optional(Destination),
  transformation: Type.Optional(TransformationInput),
  filter: Type.Optional(FilterInput),
  verification: Type.Optional(VerificationInput),
  response: Type.Optional(ResponseInput),
  handshake: Type.Optional(HandshakeInput),
  dedupe: Type.Optional(DedupeInput),
}, { additionalProperties: false });

/** `PATCH /v1/endpoints/{id}` body: any of these fields; the others stay as they are. */
export const EndpointUpdateSchema = Type.Object({
  name: Type.Optional(ResourceName),
  destination: Type.Optional(Destination),
  status: Type.Optional(EndpointStatus),
  transformation: Type.Optional(TransformationInput),
  filter: Type.Optional(FilterInput),
  verification: Type.Optional(VerificationInput),
  response: Type.Optional(ResponseInput),
  handshake: Type.Optional(HandshakeInput),
  dedupe: Type.Optional(DedupeInput),
}, { additionalProperties: false });

const destinationFields = {
  transformation: Type.Optional(TransformationInput),
  filter: Type.Optional(FilterInput),
  rate_per_second: Type.Optional(RatePerSecondInput),
  max_in_flight: Type.Optional(MaxInFlightInput),
  auth: Type.Optional(AuthInput),
  tls: Type.Optional(TlsInput),
  signature_scheme: Type.Optional({ ...SignatureSchemeSchema, description: 'v1 (HMAC, the default) or v1a (ed25519); changing it makes a new secret, the old one signing beside it for 24 hours' }),
  ordering: Type.Optional(OrderingInput),
  delay_seconds: Type.Optional(DelaySecondsInput),
};

/** A blocked key of an ordered destination: the event that gave up holds it. */
export const BlockedKeySchema = Type.Object({
  key: Type.String({ description: 'The ordering key ("" for events without one, or an unkeyed destination)' }),
  event_id: IdOf('event', 'The event that gave up and holds the key'),
  blocked_at: Timestamp,
  waiting: Type.Integer({ description: 'Events of this key waiting behind it' }),
});
export const BlockedKeyListSchema = Type.Object({ data: Type.Array(BlockedKeySchema) });
export const UnblockSchema = Type.Object({
  key: Type.String({ maxLength: 1000, description: 'The blocked key to release' }),
}, { additionalProperties: false });

/** `POST /v1/endpoints/{id}/destinations` body. */
export const DestinationCreateSchema = Type.Object({ destination: Destination, ...destinationFields }, { additionalProperties: false });

/** `PATCH /v1/destinations/{id}` body: any of these fields; the others stay as they are. null removes a rule or limit. */
export const DestinationUpdateSchema = Type.Object(
  { destination: Type.Optional(Destination), status: Type.Optional(DestinationStatus), ...destinationFields },
  { additionalProperties: false },
);

export const SecretSchema = Type.Object({
  secret: Type.String({ description: 'Current signing secret: whsec_… (v1), or the whsk_… private key (v1a)' }),
  previous_secret: Type.Union([Type.String(), Type.Null()], { description: 'The secret rotated out, still signing until previous_secret_expires_at' }),
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()]),
  public_key: Type.Union([Type.String(), Type.Null()], { description: 'v1a: the whpk_… public key receivers verify with (they need nothing else); null for v1' }),
  previous_public_key: Type.Union([Type.String(), Type.Null()], { description: 'v1a: the public key of the previous secret, while it still signs' }),
});
