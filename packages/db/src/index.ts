export * from './entities/index.ts';
export { createOrm, migrateToLatest, MIGRATIONS_TABLE, ormConfig, type CreateOrmOptions, type Orm } from './orm.ts';
export { pendingMigrations, QUEUE_STATUS_SQL, readQueueStatus, type QueueStatus } from './operations-sql.ts';
export {
  openSigningSecret, openSigningSecrets, prepareSigningSecrets, SEAL_BATCH_SIZE, sealSigningSecret, signingSecretBox, type SecretBoxOwner,
} from './signing-secrets.ts';
export { hasEmbeddedCluster, runningEmbeddedPostgres, startEmbeddedPostgres, type EmbeddedPostgres, type EmbeddedPostgresOptions } from './embedded-postgres.ts';
export { BACKUP_FORMAT_VERSION, backupDatabase, BackupError, readBackupHeader, restoreDatabase, type BackupHeader, type BackupResult, type RestoreResult } from './backup.ts';
export { EventWriter, type EventWriterOptions, type InsertOutcome, type NewEvent } from './event-writer.ts';
export { addTransformationCpu, readAccountUsage, recordTransformationThrottled, type AccountUsage } from './usage-sql.ts';
export * from './queue/index.ts';
export { eventListQuery, eventSummaryColumns, listEvents, readEventDeliveries, summarizeEvents, type EventKey, type EventListFilter, type EventListPage, type EventSummary, type ListedEvent, type ShownDelivery } from './event-summaries.ts';
export { listenForDueEvents, type DueListener } from './listener.ts';
export { openStreamChannel, readStreamEvents, STREAM_CHANNEL, STREAM_PAYLOAD_MAX_BYTES, type StreamChannel, type StreamChannelOptions, type StreamEventRow } from './stream-channel.ts';
export {
  clearNotificationUrl, drainNotificationOutbox, enqueueNotification, findNotificationEndpoint, notificationEndpointIds, setNotificationUrl,
  type NotificationEndpointRow, type NotificationInput,
} from './notifications.ts';
export {
  claimDueAlerts, pruneAlertOutbox, queueAlerts, queueTestAlerts, readAlertSettings, RECENT_ALERTS_SHOWN, recordAlertOutcome, slackUrlHint, writeAlertSettings,
  type AlertNotice, type AlertOutcome, type AlertPayload, type AlertRecord, type AlertSettings, type AlertSettingsChange, type ClaimedAlert,
} from './alerts.ts';
export { AttemptRecorder, type RecordedDelivery } from './attempt-recorder.ts';
export { BatchQueue, ItemFailure, type BatchQueueOptions } from './batch-queue.ts';
export {
  claimPlaygroundSession, findPlaygroundSession, insertPlaygroundSession, PLAYGROUND_REMOVAL_GRACE_MS, removeExpiredPlaygrounds, type PlaygroundSession,
} from './playground.ts';
export {
  dropExpiredPartitions, ensureClassPartitions, ensureHistoryPartitions, historyLeaves, maintainHistoryPartitions, PARTITIONS_AHEAD_MS, retentionClassSql, type DropResult, type HistoryLeaf,
} from './partitions.ts';
export { pruneExpiredEvents, retentionRanges, RETENTION_BATCH_PAUSE_MS, RETENTION_BATCH_SIZE, type PruneOptions, type PruneResult, type RetentionRange } from './retention-sql.ts';
export { CONSOLE_SESSION_IDLE_MS, CONSOLE_SESSION_MAX_MS, deleteConsoleSession, findConsoleSessionKey, insertConsoleSession, touchConsoleSession } from './console-sessions.ts';
export { readDailyUsage, type DailyUsage } from './daily-usage.ts';
export { countRateLimitedRequest, pruneRateLimitCounters, type RateLimitCount } from './rate-limit-counters.ts';
export {
  closeAccountEndpoints, eraseAccount, ERASURE_BATCH_PAUSE_MS, ERASURE_BATCH_SIZE, removeAccountEventBatch, removeAccountRow,
  type AccountErasure, type EraseAccountOptions,
} from './account-erasure.ts';
export {
  chooseReplica, parseLsn, ReadReplicas, replicaCheckIntervalMs, replicaName, replicaProgress,
  type PrimaryPosition, type PrimaryReadReason, type ReadReplicasOptions, type ReadTarget, type ReplicaProgress, type ReplicaStatus,
} from './read-replicas.ts';
export { destinationAuthOf, destinationTlsOf, openCredentials, sealCredentials, splitAuth, type DestinationSecrets } from './destination-credentials.ts';
export {
  acknowledgeIssue, getIssue, ISSUE_SWEEP_BATCH, listIssueEvents, listIssues, pruneIssueEvents, resolveDeliveredIssues, resolveIssue, retryIssue,
  type IssueEventRecord, type IssueListFilter, type IssueRecord,
} from './issues.ts';
