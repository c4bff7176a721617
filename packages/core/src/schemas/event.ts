/** Stored events, their deliveries and attempts, replays, and what an ingest URL answers. */
import { Type } from 'typebox';
import { ATTEMPT_BODY_MAX_BYTES, ATTEMPT_HEADER_VALUE_MAX_BYTES, ATTEMPT_HEADERS_MAX_BYTES, HEADERS_NOT_KEPT, REDACTED_HEADER_VALUE } from '../attempts.ts';
import { ATTEMPT_ERROR_CLASSES, ATTEMPT_TRIGGERS, EVENT_LIST_WINDOW, EVENT_STATUS_LIST_PATTERN, EVENT_STATUSES } from '../events.ts';
import { HANDSHAKE_PROVIDERS, VERIFICATION_PROVIDERS } from '../providers/index.ts';
import { VERIFICATION_REASONS } from '../verification.ts';
import { NOTIFICATION_TYPES } from '../notifications.ts';
import { ISSUE_KINDS } from '../issues.ts';
import { IdOf, NullableTimestamp, Page, PageQuery, Timestamp } from './common.ts';
import { Destination } from './endpoint.ts';

export const EventStatus = Type.Enum([...EVENT_STATUSES]);

/** A status filter: one status, or several separated by commas. */
const EventStatusList = (description: string) => Type.String({ pattern: EVENT_STATUS_LIST_PATTERN, maxLength: 100, description: `${description}: one of ${EVENT_STATUSES.join(', ')}, or several separated by commas (failed,retrying)` });

/** The request one attempt sent, as its attempt keeps it (core's attempts.ts). */
export const AttemptRequestSchema = Type.Object({
  headers: Type.Record(Type.String(), Type.String(), {
    description: `The headers sent, signature headers included, names lower-cased; the destination's credentials (authorization, proxy-authorization, its static auth headers) as "${REDACTED_HEADER_VALUE}". Each value is kept up to ${ATTEMPT_HEADER_VALUE_MAX_BYTES} bytes (a longer one ends with "…") and ${ATTEMPT_HEADERS_MAX_BYTES / 1024} KiB of names and values in all; the "${HEADERS_NOT_KEPT}" entry counts the headers left out. For a queue destination, the message's headers`,
  }),
  body: Type.Union([Type.String(), Type.Null()], { description: `The body sent, when a transformation changed it: its first ${ATTEMPT_BODY_MAX_BYTES} bytes, as text or base64 (body_encoding); null when the event's own body was sent (body_is_event_body)` }),
  body_encoding: Type.Union([Type.Enum(['utf8', 'base64']), Type.Null()]),
  body_truncated: Type.Boolean({ description: `true when body holds only the start of what was sent (${ATTEMPT_BODY_MAX_BYTES} bytes)` }),
  body_is_event_body: Type.Boolean({ description: "true: the event's stored body was sent byte for byte (the event's body field); false: a transformation's output, in body" }),
});

/** One delivery attempt. */
export const AttemptSchema = Type.Object({
  id: IdOf('attempt', 'Attempt id'),
  destination_id: Type.Union([IdOf('destination', 'The destination it went to'), Type.Null()], { description: 'The destination it went to; null for attempts older than destinations' }),
  n: Type.Integer({ minimum: 1 }),
  trigger: Type.Enum([...ATTEMPT_TRIGGERS]),
  started_at: Timestamp,
  duration_ms: Type.Integer(),
  response_status: Type.Union([Type.Integer(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], { description: `The first ${ATTEMPT_BODY_MAX_BYTES} bytes of the answer, as text; null when none came` }),
  error: Type.Union([Type.String(), Type.Null()]),
  failure_kind: Type.Union([Type.Enum([...ISSUE_KINDS]), Type.Null()], {
    description: 'The kind of failure, as issues group it (docs/issues.md#kinds): the answer\'s class (http_4xx, http_5xx, http_other) or why none came (timeout, connection_refused, dns, tls, network_error, transformation_error, broker_error); null for a success, and for attempts made before kinds were kept',
  }),
  request: Type.Union([AttemptRequestSchema, Type.Null()], {
    description: 'The request Hook sent (docs/api.md#attempts); null when nothing was sent (a transformation failed, or its TLS or OAuth2 settings stopped it first), and for attempts made before requests were kept',
  }),
  response_headers: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
    description: `The answer's headers as received, names lower-cased, kept as request.headers is (${ATTEMPT_HEADERS_MAX_BYTES / 1024} KiB); null when no HTTP answer came (a broker's acknowledgement, a network error), and for attempts made before they were kept`,
  }),
});

export const DeliverySchema = Type.Object({
  destination_id: IdOf('destination', 'Destination id'),
  destination: Destination,
  status: EventStatus,
  attempt_count: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  next_trigger: Type.Enum(['auto', 'replay'], { description: 'replay: a replay is queued for it' }),
  destination_deleted_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When its destination (or endpoint) was deleted; null while it is there. A delivery still pending or retrying then is failed, with no next attempt (docs/delivery.md#deleted-destinations)',
  }),
}, { description: 'The event on its way to one destination' });

export const VerificationResultSchema = Type.Object({
  provider: Type.Enum([...VERIFICATION_PROVIDERS]),
  verified: Type.Boolean(),
  reason: Type.Union([Type.Enum([...VERIFICATION_REASONS]), Type.Null()], { description: 'Why it failed; null when verified' }),
});

/** The attempt an event list shows beside each event, so a page says why deliveries fail without a GET per event. */
export const LastAttemptSchema = Type.Union([
  Type.Object({
    destination_id: Type.Union([IdOf('destination', 'The destination it went to'), Type.Null()], { description: 'The destination it went to; null for attempts older than destinations' }),
    started_at: Timestamp,
    response_status: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status the destination answered; null when no answer came' }),
    error_class: Type.Union([Type.Enum([...ATTEMPT_ERROR_CLASSES]), Type.Null()], {
      description: 'Why no answer came: timeout (none within HOOK_DELIVERY_TIMEOUT), network_error (refused, reset, DNS, a private address, a listener\'s local server unreachable) or transformation_failed (nothing sent); null when it answered. GET /v1/events/{id} has the whole error',
    }),
  }),
  Type.Null(),
], { description: 'The newest attempt to any destination, except that an event retrying or failed shows its newest failed attempt (a 2xx to another destination does not hide why it fails); null when none was made' });

const eventSummaryProperties = {
  id: IdOf('event', 'Event id'),
  endpoint_id: IdOf('endpoint', 'Endpoint that received it'),
  type: Type.Union([Type.String(), Type.Null()], { description: 'From the x-event-type header, a provider\'s own (X-GitHub-Event with the body\'s action, X-Shopify-Topic), else the JSON body\'s "type" (Slack event_callback: event.type); docs/api.md#event-type' }),
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
  last_attempt: LastAttemptSchema,
  verification: Type.Union([VerificationResultSchema, Type.Null()], { description: "What the endpoint's signature verification found (docs/sources.md); null when the endpoint verifies nothing" }),
  handshake: Type.Union([Type.Enum([...HANDSHAKE_PROVIDERS]), Type.Null()], { description: 'The provider whose handshake this request was: answered at the ingest URL and not delivered (status filtered, no deliveries; docs/sources.md, Handshakes); null otherwise' }),
  dedupe_key: Type.Union([Type.String(), Type.Null()], { description: 'The key it was stored under when its endpoint drops duplicates (docs/sources.md, Duplicates); a key longer than 200 characters is kept as sha256:<hex>; null when it had none' }),
};

export const EventSummarySchema = Type.Object(eventSummaryProperties, { description: 'An event without its body; GET /v1/events/{id} has the body' });

export const EventSchema = Type.Object({
  ...eventSummaryProperties,
  body: Type.String({ description: 'The exact body: text when valid UTF-8, else base64' }),
  body_encoding: Type.Enum(['utf8', 'base64']),
  body_truncated: Type.Optional(Type.Boolean({ description: 'With ?body_limit: true when body holds only the start of the body (size is the whole body\'s)' })),
  attempts: Type.Array(AttemptSchema, { description: 'Every attempt to every destination, oldest first' }),
  deliveries: Type.Array(DeliverySchema, { description: 'One per destination: its own status, attempts and retries' }),
});

/** `GET /v1/events/{id}` query. */
export const EventGetQuery = Type.Object(
  {
    body_limit: Type.Optional(Type.Integer({
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Return only the start of the body, at most this many bytes (never half a UTF-8 character), with body_truncated: for a reader that shows the start of a large body without downloading it',
    })),
  },
  { additionalProperties: false },
);

/**
 * `GET /v1/events`: a page of summaries, plus how far a payload search (`q`) looked. A page
 * looks through at most EVENT_LIST_WINDOW events, so a filtered page may be short, even
 * empty, with a next_cursor.
 */
export const EventPage = Type.Object({
  ...Page(EventSummarySchema).properties,
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: `Pass as cursor for the next page; null on the last page. A page looks through at most ${EVENT_LIST_WINDOW.toLocaleString('en')} events, so with filters it may hold fewer than limit events, or none, and still have a next_cursor: keep paging until it is null`,
  }),
  search_scanned: Type.Optional(Type.Integer({ description: 'With q: how many events this page looked through, newest first from the cursor on' })),
  search_truncated: Type.Optional(Type.Boolean({ description: `With q: true when the page stopped at its bound of ${EVENT_LIST_WINDOW.toLocaleString('en')} events with older ones left unsearched; next_cursor then continues below them` })),
});

export const ReplayOutcome = Type.Enum(['attempted', 'sent_to_listener', 'waiting_for_listener', 'in_flight'], {
  description: 'attempted: a URL or broker destination got its attempt (see attempts); sent_to_listener: a `hook listen` session has it now; waiting_for_listener: the next session that connects gets it; in_flight: an attempt was running, so none was queued',
});

export const ReplayResultSchema = Type.Object({
  destination_id: IdOf('destination', 'Destination id'),
  outcome: ReplayOutcome,
});

/** `POST /v1/events/replay/{id}` body. */
export const ReplayRequestSchema = Type.Object({ destination_id: Type.Optional(IdOf('destination', 'Only the delivery to this destination')) }, { additionalProperties: false });

/** `POST /v1/events/replay/{id}`: the event after the replay, and what happened per destination. */
export const ReplayedEventSchema = Type.Object({ ...EventSchema.properties, replay: Type.Array(ReplayResultSchema) });

/** `POST /v1/events/replay` body: which events to queue; all optional (default: every failing delivery, failed or retrying). */
export const BulkReplayRequestSchema = Type.Object(
  {
    endpoint_id: Type.Optional(IdOf('endpoint', 'Only this endpoint\'s events')),
    destination_id: Type.Optional(IdOf('destination', 'Only deliveries to this destination')),
    status: Type.Optional(EventStatusList('Only deliveries in these statuses; default failed,retrying (everything failing)')),
    since: Type.Optional({ ...Timestamp, description: 'Only events received at or after this time' }),
    until: Type.Optional({ ...Timestamp, description: 'Only events received before this time' }),
  },
  { additionalProperties: false },
);

/** `POST /v1/events/replay`: how much was queued. */
export const BulkReplayResultSchema = Type.Object({
  replayed: Type.Integer({ description: 'How many events were queued for replay' }),
  deliveries: Type.Integer({ description: 'How many deliveries (an event has one per destination)' }),
  waiting_for_listener: Type.Integer({ description: 'Of those, how many go to `hook listen` destinations (each to the next listener that claims it)' }),
  limit: Type.Integer({ description: 'The most deliveries one request queues; deliveries equal to limit means more may match' }),
  status: Type.Array(EventStatus, { description: 'The delivery statuses replayed: the request\'s, or the default failed and retrying' }),
});

/**
 * What an ingest URL answers: the stored event's id. `duplicate`: the endpoint drops
 * duplicates and already stored this request's key; nothing was stored.
 */
export const IngestAccepted = Type.Object({
  id: IdOf('event', 'The stored event; for a duplicate, the event first stored under its key'),
  status: Type.Union([EventStatus, Type.Literal('duplicate')], { description: 'pending; duplicate when the endpoint drops duplicates and already stored this key (docs/sources.md, Duplicates): nothing was stored' }),
});

/** `GET /v1/events` query. */
export const EventListQuery = Type.Object(
  {
    endpoint_id: Type.Optional(IdOf('endpoint', 'Only this endpoint\'s events')),
    status: Type.Optional(EventStatusList('Only events in these statuses')),
    type: Type.Optional(Type.String({ maxLength: 200, description: 'Only events of this exact type' })),
    since: Type.Optional({ ...Timestamp, description: 'Only events received at or after this time' }),
    until: Type.Optional({ ...Timestamp, description: 'Only events received before this time' }),
    q: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 200,
      description: `Only events whose body contains this text, case-insensitive (the body read as UTF-8; a body that is not valid UTF-8 is searched in its ASCII parts). Like every filter, looks through at most ${EVENT_LIST_WINDOW.toLocaleString('en')} events a page, newest first from the cursor on: see next_cursor and search_truncated`,
    })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

/** `GET /v1/account/notifications/events` query. */
export const NotificationEventQuerySchema = Type.Object(
  { type: Type.Optional(Type.Enum([...NOTIFICATION_TYPES], { description: 'Only this notification type' })), ...PageQuery },
  { additionalProperties: false },
);
