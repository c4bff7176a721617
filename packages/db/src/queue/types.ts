import type { AttemptTrigger, DestinationAuth, DestinationTls, DestinationType, EndpointFilter, EventStatus, IssueKind, OrderingOnGiveUp, QueueTarget, VerificationResult } from '@hook/core';

/** The channel that tells idle workers a URL delivery may be due. */
export const DUE_CHANNEL = 'hook_events_due';

/** A received request as stored: what it was and where it goes. */
export interface ReceivedEvent {
  id: string;
  accountId: string;
  endpointId: string;
  type: string | null;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: Buffer;
  contentType: string | null;
  size: number;
  receivedAt: Date;
  /** What signature verification found at ingest; null (or absent) when the endpoint verifies nothing. */
  verification?: VerificationResult | null;
  /** The provider whose handshake this request was: stored without deliveries. */
  handshake?: string | null;
  /** The key it is stored under when its endpoint drops duplicates (docs/sources.md, Duplicates); null (or absent) otherwise. */
  dedupeKey?: string | null;
  /** Its ordering key for each ordered destination of its endpoint, by destination id (docs/delivery.md#ordered-delivery); null (or absent): none is ordered, as far as ingest knew. */
  orderingKeys?: Readonly<Record<string, string>> | null;
  /** The W3C traceparent of the ingest span that stored it, when the relay traces (docs/deployment.md#tracing): its delivery attempts are child spans of it. */
  traceParent?: string | null;
}

/**
 * A claimed delivery: one event on its way to one destination, with how to sign it and
 * the lease that fences it. The same shape whatever claimed it: a worker (URL
 * destinations), ingest's shortcut, a replay, or a `hook listen` session (`cli`).
 */
/** What a delivery's destination is set to beyond its URL (docs/delivery.md): read with every claim, so a change applies to the next attempt. */
export interface DeliveryOptions {
  /** A queue destination's target on its broker (its URL is destinationUrl); null for url and cli. */
  destinationTarget: QueueTarget | null;
  /** How it signs in to the receiver (secrets opened); null: it does not. */
  auth: DestinationAuth | null;
  /** Its client certificate and CA; null: none. */
  tls: DestinationTls | null;
  /** The delivery's ordering key when its destination is ordered (ordering.ts); null: unordered. */
  orderingKey: string | null;
  /** What its ordered destination does when an event gives up; null: unordered. */
  onGiveUp: OrderingOnGiveUp | null;
}

export interface ClaimedDelivery extends ReceivedEvent, DeliveryOptions {
  destinationId: string;
  destinationType: DestinationType;
  /** The URL of a URL destination; null for `cli`. */
  destinationUrl: string | null;
  /** The delivery's status when claimed. */
  status: EventStatus;
  attemptCount: number;
  autoAttempts: number;
  trigger: AttemptTrigger;
  leaseId: string;
  secrets: string[];
  endpointName: string;
  /** The destination's transformation (null: send the stored bytes as they are) and filter (null: deliver all). */
  transformationCode: string | null;
  filter: EndpointFilter | null;
  /** How many deliveries the event has (more than one: its status is a summary of them all). */
  deliveryCount: number;
  /** The delivery's retention class (partitions.ts): where its attempt is stored if the result finds the delivery moved on. */
  retentionClass: number;
}

/** What any finished delivery records, and the state it leaves the delivery in. */
export interface DeliveryResult {
  delivery: Pick<ClaimedDelivery, 'id' | 'destinationId' | 'accountId' | 'leaseId' | 'attemptCount' | 'trigger' | 'deliveryCount' | 'retentionClass'>;
  /** The attempt made (null: nothing was sent, as when the filter did not match). */
  attempt: {
    id: string;
    startedAt: Date;
    durationMs: number;
    responseStatus: number | null;
    responseBody: string | null;
    error: string | null;
    /** The kind of its failure, decided where it failed (core's AttemptKind, SendResult.kind); null: it succeeded. */
    failureKind: IssueKind | null;
    /** The headers sent and answered, bounded by core's boundHeaders (stored as given), and the body sent (docs/api.md#attempts): null or absent when not kept. */
    requestHeaders?: Record<string, string> | null;
    responseHeaders?: Record<string, string> | null;
    requestBody?: Buffer | null;
  } | null;
  next: { status: EventStatus; autoAttempts: number; nextAttemptAt: Date | null };
  /** A type the destination's transformation set: stored as the event's type with the result. */
  newType?: { type: string | null };
}
