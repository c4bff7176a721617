/**
 * The JSON the relay's REST API speaks (docs/api.md), field names as on the wire.
 * Declared here rather than imported from the relay: a client never depends on the
 * server's code, only on its contract.
 */
import type { AttemptTrigger, BodyEncoding, EndpointStatus, EventStatus, FieldError, NotificationType, Plan, StreamAttempt, StreamEventSummary } from '@hook/core';
import type { HmacAlgorithm, HmacEncoding, HmacSigned, VerificationMode, VerificationProvider, VerificationReason, VerificationResult } from '@hook/core';
import type { NotificationBody, NotificationData } from '@hook/core';
import type { HandshakeProvider } from '@hook/core';
import type { DedupeSettings } from '@hook/core';

export type { AttemptTrigger, BodyEncoding, EndpointStatus, EventStatus, FieldError, Plan };
export type { HmacAlgorithm, HmacEncoding, HmacSigned, VerificationMode, VerificationProvider, VerificationReason, VerificationResult };
export type { NotificationBody, NotificationData, NotificationType };
export type { HandshakeProvider };

/** An RFC 9457 problem document as the relay sends it (`application/problem+json`). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** Stable snake_case code; docs/errors.md lists every one. */
  code: string;
  /** A sentence saying how to fix it. */
  fix: string;
  /** One entry per invalid field, for `validation_failed`. */
  errors?: FieldError[];
  request_id: string;
}

/** One page of a list route: pass `next_cursor` back as `cursor` for the next; null on the last page. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** `?limit=&cursor=` of every list route. */
export interface PageQuery {
  /** 1–100, default 20. */
  limit?: number;
  cursor?: string;
}

export interface Account {
  id: string;
  plan: Plan;
  /** Given at signup; null when none was. */
  email: string | null;
  /** CIDRs API requests must come from; empty allows any address. */
  allowed_ips: string[];
  /** The host the account's endpoint URLs use instead of the relay's; null when none. */
  custom_domain: string | null;
  /** The account's own retention in days (enterprise); null keeps the plan's. */
  retention_days: number | null;
  created_at: string;
}

/** `PATCH /v1/account` body: fields left out stay as they are. */
export interface AccountUpdate {
  /** IP addresses and CIDRs (IPv4 or IPv6); [] allows any address. Pro and enterprise. */
  allowed_ips?: string[];
  /** A hostname you point (CNAME) at the relay; null clears it. Pro and enterprise. */
  custom_domain?: string | null;
  /** Days to keep events; null keeps the plan's. Enterprise. */
  retention_days?: number | null;
  /** A contact address; null clears it. */
  email?: string | null;
}

/** What a plan allows; null means unlimited. The relay enforces each (docs/plans.md). */
export interface PlanLimits {
  events_per_month: number | null;
  endpoints: number | null;
  members: number | null;
  retention_days: number;
  api_requests_per_minute: number;
  /** CPU time (ms) the account's transformations may use per minute in one relay process. */
  transformation_cpu_ms_per_minute: number;
  ip_allowlist: boolean;
  custom_domain: boolean;
  custom_retention: boolean;
  /** null is a custom price. */
  price_usd_per_month: number | null;
  support: 'community' | 'priority' | 'dedicated';
}

/** This calendar month's (UTC) usage; `events_accepted` is exact. */
export interface AccountUsage {
  /** `YYYY-MM` */
  month: string;
  events_accepted: number;
  /** null when the plan is unlimited. */
  events_remaining: number | null;
  resets_at: string;
  endpoints: number;
  members: number;
  /** CPU time this month's transformations used, in ms. */
  transformation_cpu_ms: number;
}

/** One change of plan. */
export interface PlanChange {
  id: string;
  from_plan: Plan;
  to_plan: Plan;
  changed_at: string;
}

/** `GET /v1/account` and `POST /v1/account/plan`: the account, its plan's limits, its plan history (newest first). */
export interface AccountDetails {
  account: Account;
  limits: PlanLimits;
  usage: AccountUsage;
  plan_history: PlanChange[];
}

/** `DELETE /v1/account`: the account is gone, with how many of each thing were erased. */
export interface AccountDeletion {
  id: string;
  deleted: true;
  erased: { endpoints: number; destinations: number; events: number; api_keys: number; members: number };
}

/** `POST /v1/accounts` body. */
export interface SignupRequest {
  /** A contact address, stored and shown; never verified or mailed. */
  email?: string;
}

/** `POST /v1/accounts`: the new account and its first key, shown only here. */
export interface Signup {
  account: Account;
  api_key: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  /** `hk_` and the next 8 characters, to tell keys apart. */
  prefix: string;
  /** The member the key belongs to (`mem_…`); the key acts with that member's role. */
  member_id: string;
  created_at: string;
}

/** `admin` may also manage members, other members' keys and the plan. */
export type MemberRole = 'admin' | 'member';

/** A team member of the account (`GET /v1/members`). */
export interface Member {
  id: string;
  /** null for an account's first admin made without an email. */
  email: string | null;
  role: MemberRole;
  created_at: string;
}

/** `POST /v1/members`: the new member and its first API key, shown only here. */
export interface CreatedMember {
  member: Member;
  api_key: string;
}

/** `POST /v1/api-keys`: the key object plus the key itself, shown only here. */
export interface CreatedApiKey extends ApiKey {
  api_key: string;
}

/** Where a destination sends: `hook listen` (`cli`) or signed POSTs to a URL. */
export type DestinationTarget = { type: 'cli' } | { type: 'url'; url: string };

export interface Endpoint {
  id: string;
  name: string;
  /** The ingest URL: send events here (no API key needed). */
  url: string;
  status: EndpointStatus;
  /** The first destination's target. */
  destination: DestinationTarget;
  /** The first destination's transformation (docs/transformations.md), or null. */
  transformation: EndpointTransformation | null;
  /** The first destination's filter (docs/filters.md), or null for all events. */
  filter: EndpointFilter | null;
  /** Every destination, first first: each event is delivered to each. */
  destinations: Destination[];
  /** Signature verification at the ingest URL (docs/sources.md); null when off. The secret is never shown. */
  verification: EndpointVerification | null;
  /** What a stored request is answered with (docs/api.md, Custom responses); null: the default `{"id","status"}` JSON. */
  response: EndpointResponse | null;
  /** The handshake answered at the ingest URL (docs/sources.md, Handshakes); null when none. */
  handshake: EndpointHandshake | null;
  /** Where a request's dedupe key is (docs/sources.md, Duplicates); null when every request is stored. */
  dedupe: EndpointDedupe | null;
  created_at: string;
  updated_at: string;
}

/**
 * Where an endpoint finds a request's dedupe key (docs/sources.md, Duplicates): a header
 * (shown lower-cased) or a field of a JSON body, dotted for a nested one (`id`, `data.id`).
 * A request whose key the endpoint already stored is answered with the original event's id
 * and not stored or delivered again.
 */
export type EndpointDedupe = DedupeSettings;

/** An endpoint's handshake as the API shows it: never the secret. */
export interface EndpointHandshake {
  provider: HandshakeProvider;
  secret_set: boolean;
  /** The secret's last 4 characters; null without one. */
  secret_hint: string | null;
}

/** Setting an endpoint's handshake; null turns it off. */
export interface EndpointHandshakeInput {
  provider: HandshakeProvider;
  /** meta: the verify token; zoom: the secret token; twitter: the consumer secret (required for these, refused for the others). */
  secret?: string;
}

/** An endpoint's custom response as the API shows it (header names lower-cased). */
export interface EndpointResponse {
  /** 200–299. */
  status: number;
  headers: Record<string, string>;
  /** At most 4096 UTF-8 bytes; `{{event_id}}` is replaced by the stored event's id. */
  body: string;
}

/** Setting an endpoint's custom response; null restores the default. */
export interface EndpointResponseInput {
  /** 200–299; default 200. */
  status?: number;
  /** At most 20; hop-by-hop headers, Content-Length, Content-Encoding, Set-Cookie, Date and Server are refused. */
  headers?: Record<string, string>;
  body?: string;
}

/** The generic HMAC's settings (provider `hmac`). */
export interface HmacVerificationFields {
  /** The header carrying the signature. */
  header?: string;
  algorithm?: HmacAlgorithm;
  encoding?: HmacEncoding;
  /** Text before the signature, e.g. `sha256=`. */
  prefix?: string;
  signed?: HmacSigned;
  /** With signed `timestamp.body`: the header carrying the Unix timestamp. */
  timestamp_header?: string;
}

/** An endpoint's signature verification as the API shows it. */
export interface EndpointVerification extends HmacVerificationFields {
  provider: VerificationProvider;
  mode: VerificationMode;
  tolerance_seconds: number;
  secret_set: true;
  /** The secret's last 4 characters. */
  secret_hint: string;
}

/** Setting an endpoint's signature verification (`verification` of create and update); null turns it off. */
export interface EndpointVerificationInput extends HmacVerificationFields {
  provider: VerificationProvider;
  /** The sender's signing secret (write-only). */
  secret: string;
  /** Default `reject`. */
  mode?: VerificationMode;
  /** Default 300. */
  tolerance_seconds?: number;
}

/** Why the relay (or you) disabled a destination: 410 Gone, failing too long (docs/delivery.md#destination-health), or by hand. */
export type DestinationDisabledReason = 'gone_410' | 'failing' | 'user';

/** One place an endpoint's events go, with its own signing secret, status, rules, limits and health. */
export interface Destination {
  /** `dst_…` */
  id: string;
  endpoint_id: string;
  /** Order among the endpoint's destinations; the lowest is the endpoint's first. */
  position: number;
  destination: DestinationTarget;
  /** `paused` holds deliveries until active again; `disabled` stops them. */
  status: EndpointStatus;
  /** null unless disabled. */
  disabled_reason: DestinationDisabledReason | null;
  transformation: EndpointTransformation | null;
  filter: EndpointFilter | null;
  /** Most deliveries started per second; null: no limit. */
  rate_per_second: number | null;
  /** Most deliveries in flight at once; null: the relay's per-destination share. */
  max_in_flight: number | null;
  health: DestinationHealth;
  created_at: string;
  updated_at: string;
}

export interface DestinationHealth {
  /** Attempts that failed in a row; 0 after any 2xx. */
  consecutive_failures: number;
  /** When the current run of failures began; null when the last attempt succeeded. */
  failing_since: string | null;
}

/** `POST /v1/endpoints/{id}/destinations` body. */
export interface DestinationCreate {
  destination: DestinationTarget;
  transformation?: EndpointTransformation | null;
  filter?: EndpointFilter | null;
  /** 1–10000; null: no limit. */
  rate_per_second?: number | null;
  /** 1–1000; null: the relay's per-destination share. */
  max_in_flight?: number | null;
}

/** `PATCH /v1/destinations/{id}`: any of these fields; the others stay as they are. null removes a rule or limit. */
export interface DestinationUpdate extends Partial<DestinationCreate> {
  /** Made `active` again, its waiting deliveries are due at once. */
  status?: EndpointStatus;
}

export interface EndpointTransformation {
  /** JavaScript source registering `addHandler('transform', (request, context) => request)`; at most 64 KiB. */
  code: string;
}

/** `{body?, headers?, query?, path?}`: match schemas (docs/filters.md). */
export type EndpointFilter = Record<string, unknown>;

export interface EndpointCreate {
  name: string;
  /** The first destination; default `{type: "cli"}`. */
  destination?: DestinationTarget;
  transformation?: EndpointTransformation | null;
  filter?: EndpointFilter | null;
  verification?: EndpointVerificationInput | null;
  response?: EndpointResponseInput | null;
  handshake?: EndpointHandshakeInput | null;
  dedupe?: EndpointDedupe | null;
}

/** `PATCH /v1/endpoints/{id}`: any of these fields; the others stay as they are. null removes a transformation or filter. */
export interface EndpointUpdate {
  name?: string;
  /** The first destination's target. */
  destination?: DestinationTarget;
  status?: EndpointStatus;
  transformation?: EndpointTransformation | null;
  filter?: EndpointFilter | null;
  /** null turns verification off. */
  verification?: EndpointVerificationInput | null;
  /** null restores the default answer. */
  response?: EndpointResponseInput | null;
  /** null turns the handshake off. */
  handshake?: EndpointHandshakeInput | null;
  /** null turns dedupe off (every request is stored again). */
  dedupe?: EndpointDedupe | null;
}

export interface SigningSecret {
  /** `whsec_…`, signing deliveries now. */
  secret: string;
  /** The secret rotated out, still signing beside `secret` until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
}

/**
 * An event as lists show it: everything but the body and attempts. The live stream's
 * summary (`path`: what followed the ingest id in the URL; `query`: the raw query
 * string without "?"; `size`: body bytes) plus the request headers and delivery counters.
 */
export interface EventSummary extends StreamEventSummary {
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
  attempt_count: number;
  next_attempt_at: string | null;
  /** What the endpoint's signature verification found; null when it verifies nothing. */
  verification: VerificationResult | null;
  /** The provider whose handshake this request was: answered at ingest, not delivered (status filtered). */
  handshake: HandshakeProvider | null;
  /** The dedupe key it was stored under (docs/sources.md, Duplicates); a key over 200 characters is kept as `sha256:<hex>`; null when none. */
  dedupe_key: string | null;
}

/** One delivery attempt: the live stream's shape plus the start of the answer. */
export interface Attempt extends StreamAttempt {
  /** The destination it went to; null for attempts older than destinations. */
  destination_id: string | null;
  response_body: string | null;
}

/** The event on its way to one destination: its own status, attempts and retries. */
export interface Delivery {
  destination_id: string;
  destination: DestinationTarget;
  status: EventStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  /** `replay`: a replay is queued for it. */
  next_trigger: 'auto' | 'replay';
}

/** `GET /v1/events/{id}`: the whole event. */
export interface Event extends EventSummary {
  /** The exact body: the text when it is valid UTF-8, else base64 (see `body_encoding`). */
  body: string;
  body_encoding: BodyEncoding;
  /** Every attempt to every destination, oldest first. */
  attempts: Attempt[];
  /** One per destination, first first. */
  deliveries: Delivery[];
}

/** `POST /v1/events/replay/{id}` body. */
export interface ReplayRequest {
  /** Only the delivery to this destination (`dst_…`); default: every delivery of the event. */
  destination_id?: string;
}

/**
 * What a replay did for one destination. `attempted`: a URL destination got its attempt (the
 * event's last attempt to it); `sent_to_listener`: a `hook listen` session has it now;
 * `waiting_for_listener`: the next session that connects gets it; `in_flight`: an attempt was
 * running, so none was queued.
 */
export type ReplayOutcome = 'attempted' | 'sent_to_listener' | 'waiting_for_listener' | 'in_flight';

/** `POST /v1/events/replay/{id}`: the event after the replay, and what happened per destination. */
export interface ReplayedEvent extends Event {
  replay: Array<{ destination_id: string; outcome: ReplayOutcome }>;
}

export interface EventListQuery extends PageQuery {
  endpoint_id?: string;
  status?: EventStatus;
  /** Exact event type. */
  type?: string;
  /** ISO 8601: events received at or after this time. */
  since?: string;
  /** ISO 8601: events received before this time. */
  until?: string;
  /** Text in the body, any case; searches at most the 10,000 newest events matching the rest (docs/api.md#get-v1events). */
  q?: string;
}

/** `POST /v1/events/replay`: which events to queue; all optional (default: every failed event). */
export interface BulkReplayRequest {
  endpoint_id?: string;
  /** Only deliveries to this destination (`dst_…`). */
  destination_id?: string;
  /** Default `failed`. */
  status?: EventStatus;
  /** ISO 8601: events received at or after this time. */
  since?: string;
  /** ISO 8601: events received before this time. */
  until?: string;
}

export interface BulkReplayResult {
  /** How many events were queued for a replay attempt. */
  replayed: number;
  /** How many deliveries (an event has one per destination). */
  deliveries: number;
  /** Of those, how many go to `hook listen` destinations (each to the next listener that claims it). */
  waiting_for_listener: number;
  /** The most deliveries one request queues; `deliveries === limit` means more may match. */
  limit: number;
}

/** The request a transformation receives and returns (docs/transformations.md). */
export interface TransformationRequest {
  method: string;
  /** After the ingest URL: '' or starting with '/'. */
  path: string;
  /** Without '?'; '' when none. */
  query: string;
  headers: Record<string, string>;
  /** Parsed JSON, or a string when the content is not JSON. */
  body: unknown;
}

/** `POST /v1/transformations/test`: exactly one of `event_id` and `request`. */
export interface TransformationTestRequest {
  code: string;
  event_id?: string;
  /** Fields left out default to POST, '', '', {}, null; `type` is what the code sees as `context.type`. */
  request?: Partial<TransformationRequest> & { type?: string | null };
}

/** What running a transformation gave; `ok: false` is a failed transformation, not a failed request. */
export interface TransformationTestResult {
  ok: boolean;
  request?: TransformationRequest;
  /** The event type the code set with `context.setType`, when it set one. */
  type?: string | null;
  logs: { level: 'log' | 'info' | 'warn' | 'error' | 'debug'; message: string }[];
  error?: { message: string; line: number | null };
}

/**
 * What an ingest URL answers: the stored event's id. `duplicate`: the endpoint drops
 * duplicates and already stored this request's key; nothing was stored, and `id` is the
 * event first stored under it.
 */
export interface IngestAccepted {
  id: string;
  status: EventStatus | 'duplicate';
}

/** `GET`/`PUT /v1/account/notifications`: where the account's notifications go (docs/notifications.md). */
export interface NotificationSettings {
  url: string;
  /** `whsec_…`: verify notifications with it (`verifyWebhook`). */
  secret: string;
  /** `disabled` after the URL answered 410; setting the URL again makes it `active`. */
  status: EndpointStatus;
  created_at: string;
  updated_at: string;
}

/** `GET /v1/account/notifications/events` query. */
export interface NotificationEventQuery extends PageQuery {
  type?: NotificationType;
}
