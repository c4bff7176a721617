// Calls from the console to the relay: same origin, the session cookie, and the header
// that tells the relay the call comes from the console (see docs/console.md).
import type * as S from '@hook/core/schemas';
import type { Static } from '@hook/core/schemas';

/** A problem document as the console holds it: the relay's (docs/errors.md), or only a status when the answer was no JSON. */
export type Problem = Partial<Static<typeof S.Problem>> & { status: number };

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

/** GET /console/session; its schema is the console route's own (apps/relay/src/routes/console/session.ts), not the REST API's. */
export interface Session { account_id: string; member_id: string; role: 'admin' | 'member'; key_prefix: string }

// The REST API's JSON, as @hook/core/schemas defines it for the relay, @hook/client and /openapi.json (types only: nothing of it is bundled).
export type Destination = Static<typeof S.DestinationSchema>;
export type Endpoint = Static<typeof S.EndpointSchema>;
export type ApiKey = Static<typeof S.ApiKeySchema>;
export type Member = Static<typeof S.MemberSchema>;
/** GET /v1/account/alerts (docs/alerts.md). */
export type AlertSettings = Static<typeof S.AlertSettingsSchema>;
export type Attempt = Static<typeof S.AttemptSchema>;
export type AttemptRequest = Static<typeof S.AttemptRequestSchema>;
export type Delivery = Static<typeof S.DeliverySchema>;
/** An event as a list shows it (GET /v1/events) or in full (GET /v1/events/{id}: body, attempts and deliveries too). */
export type HookEvent = Static<typeof S.EventSummarySchema> & Partial<Omit<Static<typeof S.EventSchema>, keyof Static<typeof S.EventSummarySchema>>>;
export type Page<T> = { data: T[]; next_cursor: string | null };
/** Failed deliveries to one destination grouped by kind of failure (docs/issues.md): GET /v1/issues, GET /v1/issues/{id}. */
export type Issue = Static<typeof S.IssueSchema>;
/** GET /v1/issues/{id}/events: one covered event and its delivery to the issue's destination. */
export type IssueEvent = Static<typeof S.IssueEventSchema>;
