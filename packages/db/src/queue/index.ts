/**
 * The delivery queue: one row per (event, destination) in `delivery`, claimed under
 * leases by workers (URL destinations) and `hook listen` sessions (`cli`), its results
 * recorded by one statement. Each statement lives in its own file under ./statements
 * with why it is shaped as it is; all run through one executor (executor.ts).
 */
export { queueExecutor, QueueExecutor, runStatement, type NamedStatement, QUEUE_SESSION_SETTINGS } from './executor.ts';
export { DUE_CHANNEL, type ClaimedDelivery, type DeliveryResult, type ReceivedEvent } from './types.ts';
export { insertEvents, insertEventsOrFail, type InsertOptions, type InsertOutcome, type KnownUsageRows, type NewEvent } from './statements/insert-events.ts';
export { CLAIM_DUE, claimDue, type ClaimOptions } from './statements/claim-due.ts';
export { CLAIM_LISTEN, CLAIM_LISTEN_AFTER, claimForListener, type ListenClaimCursor, type ListenClaimOptions } from './statements/claim-listen.ts';
export { RECORD_GROUPED_RESULTS, RECORD_INPUT, RECORD_RESULTS, RECORD_TYPED_RESULTS, recordResults, type DestinationHealth, type RecordInput, type RecordOutcome } from './statements/record-results.ts';
export { releaseLease } from './statements/release-lease.ts';
export { makeDestinationsDue, notifyDue } from './statements/make-due.ts';
export { readDeliveries } from './statements/read-deliveries.ts';
export { replayEvent, replayMany, type ReplayFilter, type ReplayOutcome } from './statements/replay.ts';
export { refreshQueueStatistics } from './statements/refresh-statistics.ts';
export { afterOrderedResult, blockedKeys, releaseOrdering, sweepOrdering, unblockKey, type BlockedKey, type OrderedOutcome } from './statements/ordering.ts';
