import type { EventStatus, HandshakeProvider, VerificationResult } from '@hook/core';

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
