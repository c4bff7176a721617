/**
 * A typed client for the relay's REST API (docs/api.md) over undici. Every method
 * resolves to the route's JSON exactly as documented, and rejects with `HookApiError`
 * (the relay's problem+json) or `HookNetworkError` (no answer at all).
 */
import { Agent, request, type Dispatcher } from 'undici';
import { INGEST_EVENT_ID_HEADER, INGEST_EVENT_STATUS_HEADER, isSuccessStatus, LIST_LIMIT_DEFAULT, type IngestOutcome } from '@hook/core';
import { HookApiError, HookNetworkError, networkFailureOf } from './api-errors.ts';
import type {
  AccountDeletion, AccountDetails, AccountUpdate, ApiKey, BulkReplayRequest, BulkReplayResult, CreatedApiKey, Endpoint, EndpointCreate, EndpointUpdate, Event,
  EventGetQuery, EventListQuery, EventSummary, IngestAccepted, IngestSent, Page, PageQuery, Plan, Problem, SigningSecret, Signup, SignupRequest,
} from './api-types.ts';
import type { ApiKeyCreate, CreatedMember, Member, MemberCreate, MemberRole } from './api-types.ts';
import type { BlockedKeyList, Destination, DestinationCreate, DestinationList, DestinationUpdate, ReplayedEvent, ReplayRequest } from './api-types.ts';
import type { NotificationEventQuery, NotificationSettings } from './api-types.ts';
import type { AlertSettings, AlertSettingsUpdate, AlertTestResult } from './api-types.ts';
import type { TransformationTestRequest, TransformationTestResult } from './api-types.ts';
import type { Issue, IssueEvent, IssueListQuery, IssueRetry } from './api-types.ts';

/** How long to wait for a TCP (or TLS) connection before giving up. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long to wait for an answer. Long enough for `POST /v1/events/replay/{id}`, which
 * answers after its delivery attempt (up to HOOK_DELIVERY_TIMEOUT, default 15 s).
 */
export const DEFAULT_RESPONSE_TIMEOUT_MS = 60_000;

export interface HookClientOptions {
  /** The relay's base URL, e.g. `http://127.0.0.1:8080`; a path prefix is kept. */
  apiUrl: string;
  /** `hk_…`. Without one, routes that need a key fail with `authentication_required`. */
  apiKey?: string;
  /** Milliseconds to wait for a connection; default DEFAULT_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
  /** Milliseconds to wait for an answer's headers, and between chunks of its body; default DEFAULT_RESPONSE_TIMEOUT_MS. */
  responseTimeoutMs?: number;
  /** Sent as User-Agent; default `hook-client`. */
  userAgent?: string;
  /** Extra headers sent with every API request (not with `ingest.send`). */
  headers?: Record<string, string>;
  /** An undici dispatcher to send through (a proxy agent, a mock); the client then leaves closing it to you. */
  dispatcher?: Dispatcher;
}

/** Methods an ingest URL takes with `ingest.send`. (HEAD is left out: its answer has no body, so a relay from before the X-Hook-Event-Id header could not name the event.) */
export const INGEST_SEND_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET', 'OPTIONS'] as const;
export type IngestSendMethod = (typeof INGEST_SEND_METHODS)[number];

export interface IngestSendOptions {
  /** Default POST. */
  method?: IngestSendMethod;
  /** Sent as given (no content type is added for you). */
  headers?: Record<string, string>;
  /** The body bytes, sent exactly as given. */
  body?: Buffer | Uint8Array | string;
}

export interface HookClient {
  /** The base URL every API request goes to, without a trailing slash. */
  readonly apiUrl: string;
  accounts: {
    /** `POST /v1/accounts` (no key needed): a new account and its first API key. */
    create(body?: SignupRequest): Promise<Signup>;
  };
  account: {
    /** `GET /v1/account`: the account the key belongs to, its plan's limits and plan history. Also the cheapest way to check a key. */
    get(): Promise<AccountDetails>;
    /** `POST /v1/account/plan`: change the plan at once (no payment step); the current plan changes nothing. */
    changePlan(plan: Plan): Promise<AccountDetails>;
    /** `PATCH /v1/account` (admins): allowed_ips, custom_domain, retention_days, email; fields left out stay as they are. */
    update(changes: AccountUpdate): Promise<AccountDetails>;
    /**
     * `POST /v1/account/custom-domain/verify` (admins): looks up the TXT record the pending custom_domain's
     * `custom_domain_verification` names; once found the domain is in effect. Rejects with `custom_domain_unverified`
     * (the record expected and what DNS answered) while it is missing or wrong.
     */
    verifyCustomDomain(): Promise<AccountDetails>;
    /**
     * `DELETE /v1/account?confirm=<account id>` (admins): erases the account and everything in it for good.
     * `confirm` must be the account's own id; anything else rejects with `confirmation_required`.
     */
    delete(confirm: string): Promise<AccountDeletion>;
  };
  apiKeys: {
    create(body?: ApiKeyCreate): Promise<CreatedApiKey>;
    list(query?: PageQuery): Promise<Page<ApiKey>>;
    delete(id: string): Promise<void>;
  };
  /** The account's notifications (docs/notifications.md). */
  notifications: {
    /** `GET /v1/account/notifications`: the notification URL, its secret and status; rejects with `notifications_not_configured` when none is set. */
    get(): Promise<NotificationSettings>;
    /** `PUT /v1/account/notifications` (admins): set (or change) the notification URL. */
    set(url: string): Promise<NotificationSettings>;
    /** `DELETE /v1/account/notifications` (admins): stop notifications. */
    clear(): Promise<void>;
    /** `GET /v1/account/notifications/events`: notifications sent, newest first, with their delivery status. */
    events(query?: NotificationEventQuery): Promise<Page<EventSummary>>;
  };
  /** Where the account's alerts go besides the notification URL: Slack and email (docs/alerts.md). */
  alerts: {
    /** `GET /v1/account/alerts`: the channels (the Slack URL as a hint), whether the relay sends email, and the latest alerts. */
    get(): Promise<AlertSettings>;
    /** `PUT /v1/account/alerts` (admins): set channels; a field left out stays, null (Slack) or [] (email) removes one. */
    set(changes: AlertSettingsUpdate): Promise<AlertSettings>;
    /** `POST /v1/account/alerts/test` (admins): queue a test alert to each channel. */
    test(): Promise<AlertTestResult>;
  };
  members: {
    /** `POST /v1/members` (admins only): the new member and its first API key, shown only here. Role defaults to member. */
    create(body: MemberCreate): Promise<CreatedMember>;
    list(query?: PageQuery): Promise<Page<Member>>;
    get(id: string): Promise<Member>;
    /** `PATCH /v1/members/{id}` (admins only). */
    setRole(id: string, role: MemberRole): Promise<Member>;
    /** `DELETE /v1/members/{id}` (admins only): the member's keys stop working at once. */
    delete(id: string): Promise<void>;
  };
  endpoints: {
    create(body: EndpointCreate): Promise<Endpoint>;
    list(query?: PageQuery): Promise<Page<Endpoint>>;
    /** Every endpoint, newest first, fetching pages of `pageSize` as the loop goes. */
    iterate(pageSize?: number): AsyncGenerator<Endpoint>;
    get(id: string): Promise<Endpoint>;
    update(id: string, changes: EndpointUpdate): Promise<Endpoint>;
    delete(id: string): Promise<void>;
    /** `GET /v1/endpoints/{id}/secret`. */
    secret(id: string): Promise<SigningSecret>;
    rotateSecret(id: string): Promise<SigningSecret>;
  };
  /** Where an endpoint's events go (docs/delivery.md#destinations): each with its own secret, status, rules, limits and health. */
  destinations: {
    /** `GET /v1/endpoints/{id}/destinations`: every destination of the endpoint, first first. */
    list(endpointId: string): Promise<DestinationList>;
    /** `POST /v1/endpoints/{id}/destinations`: events received from now on are delivered to it too (at most 10 per endpoint). */
    create(endpointId: string, body: DestinationCreate): Promise<Destination>;
    get(id: string): Promise<Destination>;
    update(id: string, changes: DestinationUpdate): Promise<Destination>;
    /** Rejects with `last_destination` for an endpoint's only one. */
    delete(id: string): Promise<void>;
    /** `GET /v1/destinations/{id}/secret`. */
    secret(id: string): Promise<SigningSecret>;
    rotateSecret(id: string): Promise<SigningSecret>;
    /** `GET /v1/destinations/{id}/blocked-keys`: the keys of an ordered destination held by an event that gave up (on_give_up `block`). */
    blockedKeys(id: string): Promise<BlockedKeyList>;
    /** `POST /v1/destinations/{id}/unblock`: release a blocked key; the events waiting behind it are delivered in order. Resolves to the destination. */
    unblock(id: string, key: string): Promise<Destination>;
  };
  events: {
    list(query?: EventListQuery): Promise<Page<EventSummary>>;
    /** Every matching event, newest first, page by page. */
    iterate(query?: Omit<EventListQuery, 'cursor'>): AsyncGenerator<EventSummary>;
    /**
     * A page of up to `limit` events however rare the match (fillPage): with filters the relay
     * may answer a page short, even empty, with a next_cursor, and this follows it.
     */
    fullPage(query?: EventListQuery, options?: FillPageOptions): Promise<Page<EventSummary>>;
    /** The event; `{ body_limit }` returns only the start of its body (body_truncated says whether that is all of it). */
    get(id: string, query?: EventGetQuery): Promise<Event>;
    /**
     * `POST /v1/events/replay/{id}`: one attempt for each delivery of the event (or the one to
     * `destination_id`): URL destinations before the answer, `hook listen` ones now or when a
     * listener connects. The event after it, and the outcome per destination in `replay`.
     */
    replay(id: string, body?: ReplayRequest): Promise<ReplayedEvent>;
    /** `POST /v1/events/replay`: queues one replay attempt per matching delivery. */
    replayMany(filter?: BulkReplayRequest): Promise<BulkReplayResult>;
  };
  /** Failed deliveries grouped by destination and kind of failure, with a lifecycle (docs/issues.md). */
  issues: {
    /** `GET /v1/issues`: most recently seen first; open and acknowledged ones unless `status` says otherwise. */
    list(query?: IssueListQuery): Promise<Page<Issue>>;
    get(id: string): Promise<Issue>;
    /** `GET /v1/issues/{id}/events`: the events it covers, newest failure first, each with its delivery to the issue's destination. */
    events(id: string, query?: PageQuery): Promise<Page<IssueEvent>>;
    /** `POST /v1/issues/{id}/acknowledge`: someone is on it; new failures no longer alert. */
    acknowledge(id: string): Promise<Issue>;
    /** `POST /v1/issues/{id}/resolve`: closed by hand; a new failure reopens it. */
    resolve(id: string): Promise<Issue>;
    /**
     * `POST /v1/issues/{id}/retry`: queues one replay attempt of every covered event not yet delivered to the
     * issue's destination. Progress is `issue.events` on later `get`s; the relay resolves the issue once all are delivered.
     */
    retry(id: string): Promise<IssueRetry>;
  };
  transformations: {
    /** `POST /v1/transformations/test`: runs code against a stored event or a given request; delivers nothing. */
    test(body: TransformationTestRequest): Promise<TransformationTestResult>;
  };
  ingest: {
    /**
     * Sends a request to an endpoint's ingest URL (`endpoint.url`, optionally with a path and query after it), as a webhook provider would.
     * Resolves to the event's id and what became of it, whatever body the endpoint answers with.
     */
    send(url: string, options?: IngestSendOptions): Promise<IngestSent>;
  };
  /** Closes the client's connections (not those of a dispatcher you passed in). */
  close(): Promise<void>;
}

type Query = Record<string, string | number | undefined>;

interface CallOptions {
  query?: Query;
  /** A JSON request body. */
  json?: unknown;
  /** Send the API key (default true). */
  auth?: boolean;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** How long fillPage follows next_cursor for one page before it answers with what it has. */
export const FILL_PAGE_BUDGET_MS = 10_000;

export interface FillPageOptions {
  /** How long to follow next_cursor (default FILL_PAGE_BUDGET_MS). */
  budgetMs?: number;
  /** The clock, in ms (default Date.now). */
  now?: () => number;
}

/**
 * Up to `limit` items of a keyset-paginated list from `cursor` on, however sparse the match.
 * A page of `GET /v1/events` with filters looks through at most 1,000 events, so it may be
 * short, even empty, and still have a next_cursor (docs/api.md#get-v1events). This follows
 * next_cursor, asking each time for what is still missing, until it has `limit` items, the
 * list ends, or `budgetMs` has passed; the next_cursor it returns carries on after them.
 */
export async function fillPage<T>(
  fetchPage: (cursor: string | undefined, limit: number) => Promise<Page<T>>,
  limit: number,
  cursor: string | undefined,
  options: FillPageOptions = {},
): Promise<Page<T>> {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.budgetMs ?? FILL_PAGE_BUDGET_MS);
  const data: T[] = [];
  for (;;) {
    const page = await fetchPage(cursor, limit - data.length);
    data.push(...page.data);
    if (page.next_cursor === null || data.length >= limit || now() >= deadline) return { data, next_cursor: page.next_cursor };
    cursor = page.next_cursor;
  }
}

/** Yields every item of a keyset-paginated list, fetching the next page only when the loop gets there. */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

/** A problem document from whatever an error answer held; anything not problem-shaped becomes `unexpected_response`. */
function problemFrom(status: number, contentType: string, text: string, requestIdHeader: string, what: string): Problem {
  if (JSON_TYPE.test(contentType)) {
    try {
      const parsed = JSON.parse(text) as Partial<Problem>;
      if (parsed && typeof parsed === 'object' && typeof parsed.code === 'string' && typeof parsed.title === 'string') {
        return {
          ...parsed,
          type: parsed.type ?? `urn:hook:error:${parsed.code}`,
          title: parsed.title,
          status: typeof parsed.status === 'number' ? parsed.status : status,
          detail: parsed.detail ?? parsed.title,
          code: parsed.code,
          fix: parsed.fix ?? '',
          request_id: parsed.request_id ?? requestIdHeader,
        };
      }
    } catch {
      // Falls through to the generic problem below.
    }
  }
  const excerpt = text.trim().replace(/\s+/g, ' ').slice(0, 200);
  return {
    type: 'urn:hook:error:unexpected_response',
    title: 'Unexpected response',
    status,
    detail: `${what} answered ${status}${contentType ? ` (${contentType})` : ''}${excerpt ? `: ${excerpt}` : ' with no body'}`,
    code: 'unexpected_response',
    fix: 'Check that the URL points at a Hook relay (not a proxy or another service) and that it is healthy (GET /healthz).',
    request_id: requestIdHeader,
  };
}

export function createHookClient(options: HookClientOptions): HookClient {
  const apiUrl = withoutTrailingSlash(options.apiUrl);
  const parsed = URL.canParse(apiUrl) ? new URL(apiUrl) : undefined;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new TypeError(`apiUrl must be an http:// or https:// URL, got ${JSON.stringify(options.apiUrl)}`);
  }
  const responseTimeoutMs = options.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS;
  const ownDispatcher = options.dispatcher
    ? undefined
    : new Agent({ connect: { timeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS }, headersTimeout: responseTimeoutMs, bodyTimeout: responseTimeoutMs });
  const dispatcher = options.dispatcher ?? ownDispatcher!;
  const userAgent = options.userAgent ?? 'hook-client';

  /** One HTTP exchange: the answer's status, headers and body text; network failures become HookNetworkError. */
  async function exchange(url: string, reachable: string, init: { method: string; headers: Record<string, string>; body?: Buffer | Uint8Array | string }) {
    try {
      const response = await request(url, { method: init.method as Dispatcher.HttpMethod, headers: init.headers, body: init.body, dispatcher });
      const text = await response.body.text();
      return { status: response.statusCode, headers: response.headers, text };
    } catch (error) {
      const failure = networkFailureOf(error);
      if (failure) throw new HookNetworkError(reachable, failure[0], failure[1], { cause: error });
      throw error;
    }
  }

  /** Reads a JSON answer, or throws HookApiError for an error status or a body that is not JSON. */
  function readAnswer<T>(method: string, url: string, answer: { status: number; headers: Record<string, string | string[] | undefined>; text: string }): T {
    const contentType = headerValue(answer.headers, 'content-type');
    const requestId = headerValue(answer.headers, 'x-request-id');
    const what = `${method} ${url}`;
    if (answer.status < 200 || answer.status >= 300) throw new HookApiError(problemFrom(answer.status, contentType, answer.text, requestId, what));
    if (answer.status === 204 || answer.text === '') return undefined as T;
    if (JSON_TYPE.test(contentType)) {
      try {
        return JSON.parse(answer.text) as T;
      } catch {
        // Reported below as an unexpected response.
      }
    }
    throw new HookApiError(problemFrom(502, contentType, answer.text, requestId, `${what} (status ${answer.status}, not JSON)`));
  }

  async function call<T>(method: string, path: string, callOptions: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = { ...options.headers, accept: 'application/json, application/problem+json', 'user-agent': userAgent };
    if (callOptions.auth !== false && options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    let body: string | undefined;
    if (callOptions.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(callOptions.json);
    }
    const url = `${apiUrl}${path}${queryString(callOptions.query)}`;
    const answer = await exchange(url, apiUrl, { method, headers, body });
    return readAnswer<T>(method, url, answer);
  }

  const id = (value: string): string => encodeURIComponent(value);

  const endpoints: HookClient['endpoints'] = {
    create: (body) => call('POST', '/v1/endpoints', { json: body }),
    list: (query = {}) => call('GET', '/v1/endpoints', { query: { limit: query.limit, cursor: query.cursor } }),
    iterate: (pageSize = 100) => paginate((cursor) => endpoints.list({ limit: pageSize, cursor })),
    get: (endpointId) => call('GET', `/v1/endpoints/${id(endpointId)}`),
    update: (endpointId, changes) => call('PATCH', `/v1/endpoints/${id(endpointId)}`, { json: changes }),
    delete: (endpointId) => call('DELETE', `/v1/endpoints/${id(endpointId)}`),
    secret: (endpointId) => call('GET', `/v1/endpoints/${id(endpointId)}/secret`),
    rotateSecret: (endpointId) => call('POST', `/v1/endpoints/${id(endpointId)}/rotate-secret`, { json: {} }),
  };

  const destinations: HookClient['destinations'] = {
    list: (endpointId) => call('GET', `/v1/endpoints/${id(endpointId)}/destinations`),
    create: (endpointId, body) => call('POST', `/v1/endpoints/${id(endpointId)}/destinations`, { json: body }),
    get: (destinationId) => call('GET', `/v1/destinations/${id(destinationId)}`),
    update: (destinationId, changes) => call('PATCH', `/v1/destinations/${id(destinationId)}`, { json: changes }),
    delete: (destinationId) => call('DELETE', `/v1/destinations/${id(destinationId)}`),
    secret: (destinationId) => call('GET', `/v1/destinations/${id(destinationId)}/secret`),
    rotateSecret: (destinationId) => call('POST', `/v1/destinations/${id(destinationId)}/rotate-secret`, { json: {} }),
    blockedKeys: (destinationId) => call('GET', `/v1/destinations/${id(destinationId)}/blocked-keys`),
    unblock: (destinationId, key) => call('POST', `/v1/destinations/${id(destinationId)}/unblock`, { json: { key } }),
  };

  const events: HookClient['events'] = {
    list: (query = {}) =>
      call('GET', '/v1/events', {
        query: { endpoint_id: query.endpoint_id, status: query.status, type: query.type, since: query.since, until: query.until, q: query.q, limit: query.limit, cursor: query.cursor },
      }),
    iterate: (query = {}) => paginate((cursor) => events.list({ limit: 100, ...query, cursor })),
    fullPage: (query = {}, options = {}) => fillPage((cursor, limit) => events.list({ ...query, cursor, limit }), query.limit ?? LIST_LIMIT_DEFAULT, query.cursor, options),
    get: (eventId, query = {}) => call('GET', `/v1/events/${id(eventId)}`, { query: { body_limit: query.body_limit } }),
    replay: (eventId, body = {}) => call('POST', `/v1/events/replay/${id(eventId)}`, { json: body }),
    replayMany: (filter = {}) => call('POST', '/v1/events/replay', { json: filter }),
  };

  const issues: HookClient['issues'] = {
    list: (query = {}) =>
      call('GET', '/v1/issues', {
        query: { status: query.status, endpoint_id: query.endpoint_id, destination_id: query.destination_id, kind: query.kind, limit: query.limit, cursor: query.cursor },
      }),
    get: (issueId) => call('GET', `/v1/issues/${id(issueId)}`),
    events: (issueId, query = {}) => call('GET', `/v1/issues/${id(issueId)}/events`, { query: { limit: query.limit, cursor: query.cursor } }),
    acknowledge: (issueId) => call('POST', `/v1/issues/${id(issueId)}/acknowledge`, { json: {} }),
    resolve: (issueId) => call('POST', `/v1/issues/${id(issueId)}/resolve`, { json: {} }),
    retry: (issueId) => call('POST', `/v1/issues/${id(issueId)}/retry`, { json: {} }),
  };

  const transformations: HookClient['transformations'] = {
    test: (body) => call('POST', '/v1/transformations/test', { json: body }),
  };

  return {
    apiUrl,
    accounts: { create: (body = {}) => call('POST', '/v1/accounts', { json: body, auth: false }) },
    account: {
      get: () => call('GET', '/v1/account'),
      changePlan: (plan) => call('POST', '/v1/account/plan', { json: { plan } }),
      update: (changes) => call('PATCH', '/v1/account', { json: changes }),
      verifyCustomDomain: () => call('POST', '/v1/account/custom-domain/verify'),
      delete: (confirm) => call('DELETE', '/v1/account', { query: { confirm } }),
    },
    apiKeys: {
      create: (body = {}) => call('POST', '/v1/api-keys', { json: body }),
      list: (query = {}) => call('GET', '/v1/api-keys', { query: { limit: query.limit, cursor: query.cursor } }),
      delete: (keyId) => call('DELETE', `/v1/api-keys/${id(keyId)}`),
    },
    alerts: {
      get: () => call('GET', '/v1/account/alerts'),
      set: (changes) => call('PUT', '/v1/account/alerts', { json: changes }),
      test: () => call('POST', '/v1/account/alerts/test'),
    },
    notifications: {
      get: () => call('GET', '/v1/account/notifications'),
      set: (url) => call('PUT', '/v1/account/notifications', { json: { url } }),
      clear: () => call('DELETE', '/v1/account/notifications'),
      events: (query = {}) => call('GET', '/v1/account/notifications/events', { query: { type: query.type, limit: query.limit, cursor: query.cursor } }),
    },
    members: {
      create: (body) => call('POST', '/v1/members', { json: body }),
      list: (query = {}) => call('GET', '/v1/members', { query: { limit: query.limit, cursor: query.cursor } }),
      get: (memberId) => call('GET', `/v1/members/${id(memberId)}`),
      setRole: (memberId, role) => call('PATCH', `/v1/members/${id(memberId)}`, { json: { role } }),
      delete: (memberId) => call('DELETE', `/v1/members/${id(memberId)}`),
    },
    endpoints,
    destinations,
    events,
    issues,
    transformations,
    ingest: {
      async send(url, sendOptions = {}) {
        const method = sendOptions.method ?? 'POST';
        if (!(INGEST_SEND_METHODS as readonly string[]).includes(method)) throw new TypeError(`ingest.send takes ${INGEST_SEND_METHODS.join(', ')}, not ${method}`);
        const target = URL.canParse(url) ? new URL(url) : undefined;
        if (!target || (target.protocol !== 'http:' && target.protocol !== 'https:')) throw new TypeError(`not an http(s) ingest URL: ${JSON.stringify(url)}`);
        const headers = { 'user-agent': userAgent, ...sendOptions.headers };
        const answer = await exchange(url, target.origin, { method, headers, body: sendOptions.body });
        const eventId = headerValue(answer.headers, INGEST_EVENT_ID_HEADER);
        if (eventId !== '' && isSuccessStatus(answer.status)) {
          return { id: eventId, status: headerValue(answer.headers, INGEST_EVENT_STATUS_HEADER) as IngestOutcome };
        }
        // A relay without the headers answers the default JSON (and nothing else can be read from a custom response).
        const accepted = readAnswer<IngestAccepted | undefined>(method, url, answer);
        if (typeof accepted?.id !== 'string') {
          throw new HookApiError(problemFrom(502, headerValue(answer.headers, 'content-type'), answer.text, headerValue(answer.headers, 'x-request-id'), `${method} ${url} (status ${answer.status}, no event id)`));
        }
        return { id: accepted.id, status: accepted.status as IngestOutcome };
      },
    },
    async close() {
      await ownDispatcher?.close();
    },
  };
}
