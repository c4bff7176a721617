// Calls from the console to the relay: same origin, the session cookie, and the header
// that tells the relay the call comes from the console (see docs/console.md).

export interface Problem { status: number; code?: string; detail?: string; fix?: string; title?: string; errors?: { field: string; message: string }[] }

export class ApiError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problemText(problem));
    this.problem = problem;
  }
}

/** One sentence for a problem document: what went wrong and how to fix it. */
export function problemText(problem: Problem): string {
  const what = problem.detail ?? problem.title ?? `The relay answered ${problem.status}`;
  return problem.fix ? `${what}. ${problem.fix}` : what;
}

/** `signal` aborts a call whose answer nobody waits for any more (the events list and inspector). */
export async function call<T = any>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { 'x-hook-console': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body), signal });
  if (response.status === 204) return undefined as T;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401) window.dispatchEvent(new CustomEvent('hook:signed-out'));
    throw new ApiError({ status: response.status, ...(data ?? {}) });
  }
  return data as T;
}

export interface Session { account_id: string; member_id: string; role: string; key_prefix: string }

export interface Destination {
  id: string; endpoint_id: string; position: number;
  destination: { type: 'cli' } | { type: 'url' | 'amqp' | 'nats' | 'redis' | 'mqtt'; url: string };
  status: string; disabled_reason: string | null;
  health?: { consecutive_failures: number; failing_since: string | null };
  // Its rules and delivery options (docs/api.md#destinations); secrets only as `secret_set`.
  transformation?: { code: string } | null; filter?: Record<string, unknown> | null;
  rate_per_second?: number | null; max_in_flight?: number | null;
  auth?: ({ type: string; secret_set: true } & Record<string, unknown>) | null;
  tls?: { client_certificate: string | null; client_key_set: boolean; ca: string | null } | null;
  signature_scheme?: 'v1' | 'v1a'; public_key?: string | null;
  ordering?: { key: { header: string } | { json_field: string } | null; on_give_up: 'block' | 'skip' } | null;
  delay_seconds?: number | null;
}

export interface Endpoint {
  id: string; name: string; url: string; status: string;
  destinations?: Destination[];
  // Ingest settings (docs/sources.md); secrets only as `secret_set` and `secret_hint`.
  verification?: ({ provider: string; mode: string; tolerance_seconds: number; secret_set: boolean; secret_hint: string | null } & Record<string, unknown>) | null;
  response?: { status: number; headers: Record<string, string>; body: string } | null;
  handshake?: { provider: string; secret_set: boolean; secret_hint: string | null } | null;
  dedupe?: { header: string } | { json_field: string } | null;
  created_at?: string; updated_at?: string;
}

export interface ApiKey { id: string; name: string | null; prefix: string; member_id: string; created_at: string }
export interface Member { id: string; email: string | null; role: 'admin' | 'member'; created_at: string }
/** GET /v1/account/alerts (docs/alerts.md). */
export interface AlertSettings {
  slack: { url_hint: string } | null;
  email: { to: string[]; available: boolean };
  recent: { channel: string; type: string; status: string; attempts: number; last_error: string | null; created_at: string; sent_at: string | null }[];
}

export interface Attempt {
  id: string; destination_id?: string; n: number; trigger: string; started_at: string; duration_ms: number;
  response_status: number | null; response_body?: string | null; error: string | null;
  /** The request Hook sent (docs/api.md#attempts); null when nothing was sent, or made before requests were kept. */
  request?: AttemptRequest | null;
  /** The answer's headers, bounded; null when no HTTP answer came, or made before they were kept. */
  response_headers?: Record<string, string> | null;
}

export interface AttemptRequest {
  /** As sent, signature included; credentials as "[redacted]"; a "…" entry counts headers not kept. */
  headers: Record<string, string>;
  /** A transformation's output (its first 4 KiB); null when the event's own body was sent (body_is_event_body). */
  body: string | null; body_encoding: 'utf8' | 'base64' | null; body_truncated: boolean;
  body_is_event_body: boolean;
}

export interface Delivery {
  destination_id: string; destination: Destination['destination'] | null; status: string;
  attempt_count: number; next_attempt_at: string | null; next_trigger?: string | null;
  /** Set once its destination is deleted: a delivery still waiting then is failed (docs/delivery.md#deleted-destinations). */
  destination_deleted_at?: string | null;
}

export interface HookEvent {
  id: string; endpoint_id?: string; type: string | null; method: string; path: string; query: string;
  headers?: Record<string, string>; content_type: string | null; size: number; received_at: string;
  status: string; attempt_count?: number; next_attempt_at?: string | null;
  body?: string; body_encoding?: 'utf8' | 'base64';
  deliveries?: Delivery[]; attempts?: Attempt[];
}

export interface Page<T> { data: T[]; next_cursor: string | null }

/** Failed deliveries to one destination grouped by kind of failure (docs/issues.md): GET /v1/issues, GET /v1/issues/{id}. */
export interface Issue {
  id: string; endpoint_id: string; destination_id: string; kind: string; title: string;
  status: 'open' | 'acknowledged' | 'resolved'; resolved_by: 'user' | 'auto' | null;
  first_seen_at: string; last_seen_at: string; opened_at: string; acknowledged_at: string | null; resolved_at: string | null;
  failure_count: number; event_count: number; reopen_count: number;
  last_status: number | null; last_error: string | null; last_event_id: string;
  /** Where the covered events' deliveries to its destination stand now. */
  events: { total: number; delivered: number; failing: number; pending: number };
  retry: { requested_at: string; queued: number } | null;
}

/** GET /v1/issues/{id}/events: one covered event and its delivery to the issue's destination. */
export interface IssueEvent {
  event_id: string; type: string | null; received_at: string; delivery_status: string; attempt_count: number;
  last_failed_at: string; last_status: number | null; last_error: string | null;
}
