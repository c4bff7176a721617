/**
 * The JSON the relay's REST API speaks (docs/api.md), field names as on the wire: each type
 * is the `Static` of its schema in @hook/core/schemas, the same schemas the relay validates
 * and serialises with and builds /openapi.json from. A client still never imports the
 * server's code, only the contract both sides share; a field is added there, not here.
 */
import type { AttemptTrigger, BodyEncoding, EndpointStatus, EventStatus, FieldError, NotificationType, Plan } from '@hook/core';
import type { HmacAlgorithm, HmacEncoding, HmacSigned, VerificationMode, VerificationProvider, VerificationReason, VerificationResult } from '@hook/core';
import type { NotificationBody, NotificationData } from '@hook/core';
import type { HandshakeProvider, IngestOutcome } from '@hook/core';
import type * as S from '@hook/core/schemas';
import type { Static, TUnknown } from '@hook/core/schemas';

export type { AttemptTrigger, BodyEncoding, EndpointStatus, EventStatus, FieldError, NotificationType, Plan };
export type { HmacAlgorithm, HmacEncoding, HmacSigned, VerificationMode, VerificationProvider, VerificationReason, VerificationResult };
export type { NotificationBody, NotificationData };
export type { HandshakeProvider, IngestOutcome };

/** An RFC 9457 problem document as the relay sends it (`application/problem+json`). */
export type Problem = Static<typeof S.Problem>;

/** One page of a list route: pass `next_cursor` back as `cursor` for the next; null on the last page. */
export type Page<T> = Omit<Static<ReturnType<typeof S.Page<TUnknown>>>, 'data'> & { data: T[] };
/** `?limit=&cursor=` of every list route. */
export type PageQuery = Static<typeof S.PageQuerySchema>;

export type Account = Static<typeof S.AccountSchema>;
/** `PATCH /v1/account` body: fields left out stay as they are. */
export type AccountUpdate = Static<typeof S.AccountUpdateSchema>;
/** What a plan allows; null means unlimited. The relay enforces each (docs/plans.md). */
export type PlanLimits = Static<typeof S.PlanLimitsSchema>;
/** This calendar month's (UTC) usage; `events_accepted` is exact. */
export type AccountUsage = Static<typeof S.UsageSchema>;
export type PlanChange = Static<typeof S.PlanChangeSchema>;
/** `GET /v1/account` and `POST /v1/account/plan`: the account, its plan's limits, its plan history (newest first). */
export type AccountDetails = Static<typeof S.AccountDetailsSchema>;
/** `DELETE /v1/account`: the account is gone, with how many of each thing were erased. */
export type AccountDeletion = Static<typeof S.AccountDeletedSchema>;
/** `POST /v1/accounts` body. */
export type SignupRequest = Static<typeof S.SignupRequestSchema>;
/** `POST /v1/accounts`: the new account and its first key, shown only here. */
export type Signup = Static<typeof S.SignupSchema>;

export type ApiKey = Static<typeof S.ApiKeySchema>;
/** `POST /v1/api-keys` body. */
export type ApiKeyCreate = Static<typeof S.ApiKeyCreateSchema>;
/** `POST /v1/api-keys`: the key object plus the key itself, shown only here. */
export type CreatedApiKey = Static<typeof S.CreatedApiKeySchema>;
/** `admin` may also manage members, other members' keys and the plan. */
export type MemberRole = Static<typeof S.MemberRole>;
/** A team member of the account (`GET /v1/members`). */
export type Member = Static<typeof S.MemberSchema>;
/** `POST /v1/members` body; role defaults to member. */
export type MemberCreate = Static<typeof S.MemberCreateSchema>;
/** `POST /v1/members`: the new member and its first API key, shown only here. */
export type CreatedMember = Static<typeof S.CreatedMemberSchema>;

/** Where a destination sends: `hook listen` (`cli`) or signed POSTs to a URL. */
export type DestinationTarget = Static<typeof S.Destination>;
export type Endpoint = Static<typeof S.EndpointSchema>;
/** Where an endpoint finds a request's dedupe key (docs/sources.md, Duplicates): a header or a JSON field. */
export type EndpointDedupe = NonNullable<Static<typeof S.DedupeSchema>>;
/** An endpoint's handshake as the API shows it: never the secret. */
export type EndpointHandshake = NonNullable<Static<typeof S.HandshakeSchema>>;
/** Setting an endpoint's handshake; null turns it off. */
export type EndpointHandshakeInput = NonNullable<Static<typeof S.HandshakeInput>>;
/** An endpoint's custom response as the API shows it (header names lower-cased). */
export type EndpointResponse = NonNullable<Static<typeof S.ResponseSchema>>;
/** Setting an endpoint's custom response; null restores the default. */
export type EndpointResponseInput = NonNullable<Static<typeof S.ResponseInput>>;
/** An endpoint's signature verification as the API shows it (never the secret). */
export type EndpointVerification = NonNullable<Static<typeof S.VerificationSchema>>;
/** Setting an endpoint's signature verification (`verification` of create and update); null turns it off. */
export type EndpointVerificationInput = NonNullable<Static<typeof S.VerificationInput>>;
/** The generic HMAC's settings (provider `hmac`). */
export type HmacVerificationFields = Pick<EndpointVerificationInput, 'header' | 'algorithm' | 'encoding' | 'prefix' | 'signed' | 'timestamp_header'>;
/** Why the relay (or you) disabled a destination: 410 Gone, failing too long (docs/delivery.md#destination-health), or by hand. */
export type DestinationDisabledReason = Static<typeof S.DestinationDisabledReason>;
/** One place an endpoint's events go, with its own signing secret, status, rules, limits and health. */
export type Destination = Static<typeof S.DestinationSchema>;
/** `GET /v1/endpoints/{id}/destinations`: every destination of the endpoint, first first. */
export type DestinationList = Static<typeof S.DestinationListSchema>;
export type DestinationHealth = Static<typeof S.DestinationHealthSchema>;
/** `POST /v1/endpoints/{id}/destinations` body. */
export type DestinationCreate = Static<typeof S.DestinationCreateSchema>;
/** `PATCH /v1/destinations/{id}`: any of these fields; the others stay as they are. null removes a rule or limit. */
export type DestinationUpdate = Static<typeof S.DestinationUpdateSchema>;
/** How a destination signs in to its receiver, as set (secrets write-only); null removes it. */
export type DestinationAuthInput = NonNullable<Static<typeof S.AuthInput>>;
/** A destination's auth as shown: its type and names, never the secret (`secret_set: true`). */
export type DestinationAuth = NonNullable<Static<typeof S.AuthSchema>>;
/** A destination's TLS settings as set: client certificate and key (mTLS), a CA to trust; PEM. */
export type DestinationTlsInput = NonNullable<Static<typeof S.TlsInput>>;
/** A destination's TLS settings as shown: the certificates, never the key (`client_key_set`). */
export type DestinationTls = NonNullable<Static<typeof S.TlsSchema>>;
/** Ordered delivery as set (docs/delivery.md#ordered-delivery); null: unordered. */
export type DestinationOrderingInput = NonNullable<Static<typeof S.OrderingInput>>;
/** Ordered delivery as shown: where the key is (null: one order for every event) and what a give-up does. */
export type DestinationOrdering = NonNullable<Static<typeof S.OrderingSchema>>;
/** v1: HMAC-SHA256 (whsec_); v1a: ed25519, verified with the destination's `public_key`. */
export type SignatureScheme = Static<typeof S.SignatureSchemeSchema>;
/** A key of an ordered destination held by an event that gave up (on_give_up `block`). */
export type BlockedKey = Static<typeof S.BlockedKeySchema>;
/** `GET /v1/destinations/{id}/blocked-keys`. */
export type BlockedKeyList = Static<typeof S.BlockedKeyListSchema>;
export type EndpointTransformation = NonNullable<Static<typeof S.TransformationSchema>>;
/** `{body?, headers?, query?, path?}`: match schemas (docs/filters.md). */
export type EndpointFilter = NonNullable<Static<typeof S.FilterInput>>;
/** `POST /v1/endpoints` body. */
export type EndpointCreate = Static<typeof S.EndpointCreateSchema>;
/** `PATCH /v1/endpoints/{id}`: any of these fields; the others stay as they are. null removes a setting. */
export type EndpointUpdate = Static<typeof S.EndpointUpdateSchema>;
export type SigningSecret = Static<typeof S.SecretSchema>;

/** An event as lists show it: everything but the body, attempts and deliveries. */
export type EventSummary = Static<typeof S.EventSummarySchema>;
/** One delivery attempt. */
export type Attempt = Static<typeof S.AttemptSchema>;
/** The event on its way to one destination: its own status, attempts and retries. */
export type Delivery = Static<typeof S.DeliverySchema>;
/** `GET /v1/events/{id}`: the whole event. */
export type Event = Static<typeof S.EventSchema>;
/** `POST /v1/events/replay/{id}` body. */
export type ReplayRequest = Static<typeof S.ReplayRequestSchema>;
/** What a replay did for one destination. */
export type ReplayOutcome = Static<typeof S.ReplayOutcome>;
/** `POST /v1/events/replay/{id}`: the event after the replay, and what happened per destination. */
export type ReplayedEvent = Static<typeof S.ReplayedEventSchema>;
/** `GET /v1/events` query. */
export type EventListQuery = Static<typeof S.EventListQuery>;
/** `GET /v1/events/{id}` query. */
export type EventGetQuery = Static<typeof S.EventGetQuery>;
/** `POST /v1/events/replay`: which events to queue; all optional (default: every failed event). */
export type BulkReplayRequest = Static<typeof S.BulkReplayRequestSchema>;
export type BulkReplayResult = Static<typeof S.BulkReplayResultSchema>;

/** The request a transformation receives and returns (docs/transformations.md). */
export type TransformationRequest = Static<typeof S.TransformationRequestSchema>;
/** `POST /v1/transformations/test`: exactly one of `event_id` and `request`. */
export type TransformationTestRequest = Static<typeof S.TransformationTestRequestSchema>;
/** What running a transformation gave; `ok: false` is a failed transformation, not a failed request. */
export type TransformationTestResult = Static<typeof S.TransformationTestResultSchema>;

/** What an ingest URL answers: the stored event's id, or `duplicate` with the id first stored under the key. */
export type IngestAccepted = Static<typeof S.IngestAccepted>;
/**
 * What `ingest.send` resolves to, read from the answer's X-Hook-Event-Id and
 * X-Hook-Event-Status headers (docs/api.md, Ingest), so it holds whatever the body is: the
 * default JSON, the endpoint's custom response, or a handshake's answer.
 */
export interface IngestSent {
  /** The event stored; for a duplicate, the one first stored under its key. */
  id: string;
  status: IngestOutcome;
}

/** A group of failed attempts to one destination with one kind of failure, and its lifecycle (docs/issues.md). */
export type Issue = Static<typeof S.IssueSchema>;
/** `GET /v1/issues` query; status defaults to open,acknowledged. */
export type IssueListQuery = Static<typeof S.IssueListQuery>;
/** One event an issue covers, with its delivery to the issue's destination (`GET /v1/issues/{id}/events`). */
export type IssueEvent = Static<typeof S.IssueEventSchema>;
/** `POST /v1/issues/{id}/retry`: the issue, and how many deliveries were queued for one replay attempt. */
export type IssueRetry = Static<typeof S.IssueRetryResultSchema>;

/** `GET`/`PUT /v1/account/notifications`: where the account's notifications go (docs/notifications.md). */
export type NotificationSettings = Static<typeof S.NotificationSettingsSchema>;
/** `GET /v1/account/notifications/events` query. */
export type NotificationEventQuery = Static<typeof S.NotificationEventQuerySchema>;
/** `GET`/`PUT /v1/account/alerts`: the account's alert channels and its latest alerts (docs/alerts.md). */
export type AlertSettings = Static<typeof S.AlertSettingsSchema>;
/** `PUT /v1/account/alerts` body: a field left out stays as it is. */
export type AlertSettingsUpdate = Static<typeof S.AlertSettingsUpdateSchema>;
/** `POST /v1/account/alerts/test`: the channels a test alert was queued for. */
export type AlertTestResult = Static<typeof S.AlertTestResultSchema>;
