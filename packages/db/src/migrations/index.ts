import { InitialSchema } from './001-initial.ts';
import { DeliveryQueue } from './002-delivery-queue.ts';
import { PlanHistory } from './003-plan-history.ts';
import { Playground } from './004-playground.ts';
import { PlansEnforced } from './005-plans-enforced.ts';
import { Transformations } from './006-transformations.ts';
import { LeasedIndex } from './007-leased-index.ts';
import { TransformationCpu } from './008-transformation-cpu.ts';
import { Destinations } from './009-destinations.ts';
import { ConsoleSessions } from './010-console-sessions.ts';
import { IngestVerification } from './011-ingest-verification.ts';
import { CustomResponses } from './012-custom-responses.ts';
import { Handshakes } from './013-handshakes.ts';
import { Dedupe } from './014-dedupe.ts';
import { RateLimitCounters } from './015-rate-limit-counters.ts';
import { TraceParent } from './016-trace-parent.ts';
import { CustomDomainVerification } from './017-custom-domain-verification.ts';
import { BodyTextParallelUnsafe } from './018-body-text-parallel-unsafe.ts';
import { PartitionedHistory } from './019-partitioned-history.ts';
import { ListIndexes } from './020-list-indexes.ts';
import { PartitionedDeliveries } from './021-partitioned-deliveries.ts';
import { DedupeKeys } from './022-dedupe-keys.ts';

/** Every migration, oldest first. New ones are appended, never edited once shipped. */
export const MIGRATIONS = [
  { name: '001-initial', class: InitialSchema },
  { name: '002-delivery-queue', class: DeliveryQueue },
  { name: '003-plan-history', class: PlanHistory },
  { name: '004-playground', class: Playground },
  { name: '005-plans-enforced', class: PlansEnforced },
  { name: '006-transformations', class: Transformations },
  { name: '007-leased-index', class: LeasedIndex },
  { name: '008-transformation-cpu', class: TransformationCpu },
  { name: '009-destinations', class: Destinations },
  { name: '010-console-sessions', class: ConsoleSessions },
  { name: '011-ingest-verification', class: IngestVerification },
  { name: '012-custom-responses', class: CustomResponses },
  { name: '013-handshakes', class: Handshakes },
  { name: '014-dedupe', class: Dedupe },
  { name: '015-rate-limit-counters', class: RateLimitCounters },
  { name: '016-trace-parent', class: TraceParent },
  { name: '017-custom-domain-verification', class: CustomDomainVerification },
  { name: '018-body-text-parallel-unsafe', class: BodyTextParallelUnsafe },
  { name: '019-partitioned-history', class: PartitionedHistory },
  { name: '020-list-indexes', class: ListIndexes },
  { name: '021-partitioned-deliveries', class: PartitionedDeliveries },
  { name: '022-dedupe-keys', class: DedupeKeys },
];
