import { keptBody, type EventStatus, type IssueKind, type HandshakeProvider, type VerificationResult } from '@hook/core';
import type { AttemptEntity } from '@hook/db';

/** What any view of a stored request shows about it, body aside. */
export interface StoredRequest {
  id: string;
  type?: string | null;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  contentType?: string | null;
  size: number;
  receivedAt: Date;
  status: EventStatus;
  /** What signature verification at ingest found; null or absent when the endpoint verifies nothing. */
  verification?: VerificationResult | null;
  /** The provider whose handshake this request was (answered at ingest, not delivered); null or absent otherwise. */
  handshake?: string | null;
  /** The dedupe key it was stored under (docs/sources.md, Duplicates); null or absent when none. */
  dedupeKey?: string | null;
  /** Absent for an event just stored (none made yet). */
  attemptCount?: number;
}

/** The request as the API shows it (GET /v1/events and the playground build on this). */
export function presentStoredRequest(event: StoredRequest) {
  return {
    id: event.id,
    type: event.type ?? null,
    method: event.method,
    path: event.path,
    query: event.query,
    headers: event.headers,
    content_type: event.contentType ?? null,
    size: event.size,
    received_at: event.receivedAt.toISOString(),
    status: event.status,
    attempt_count: event.attemptCount ?? 0,
    verification: event.verification ?? null,
    handshake: (event.handshake ?? null) as HandshakeProvider | null,
    dedupe_key: event.dedupeKey ?? null,
  };
}

/**
 * One attempt as GET /v1/events/{id} shows it (docs/api.md#attempts), with the request it
 * sent and the answer's headers. `request` is null when nothing was sent, and for attempts
 * made before requests were kept; a null body there is the event's own (no transformation
 * changed it), shown once, as the event's body.
 */
export function presentAttempt(attempt: AttemptEntity) {
  const requestHeaders = attempt.requestHeaders ?? null;
  const requestBody = attempt.requestBody ?? null;
  return {
    id: attempt.id,
    destination_id: attempt.destinationId ?? null,
    n: attempt.n,
    trigger: attempt.trigger,
    started_at: attempt.startedAt.toISOString(),
    duration_ms: attempt.durationMs,
    response_status: attempt.responseStatus ?? null,
    response_body: attempt.responseBody ?? null,
    error: attempt.error ?? null,
    failure_kind: (attempt.failureKind ?? null) as IssueKind | null,
    request: requestHeaders === null ? null : {
      headers: requestHeaders,
      ...(requestBody === null
        ? { body: null, body_encoding: null, body_truncated: false, body_is_event_body: true }
        : { ...keptBody(Buffer.from(requestBody.buffer, requestBody.byteOffset, requestBody.byteLength)), body_is_event_body: false }),
    },
    response_headers: attempt.responseHeaders ?? null,
  };
}
