import type { EventStatus } from '@hook/core';
import { BatchQueue } from './batch-queue.ts';
import type { Orm } from './orm.ts';
import { summarizeEvents } from './event-summaries.ts';
import { recordResults, type RecordInput } from './queue/index.ts';

/** Under load, how long a batch of results waits for more (BatchQueue's gatherMs). */
export const RECORD_GATHER_MS = 2;

export interface RecordedDelivery {
  /** The delivery still held its lease, so it moved on (the attempt is recorded either way). */
  held: boolean;
  /** The event's status after (its summary over all its deliveries); null when the delivery no longer held its lease. */
  eventStatus: EventStatus | null;
}

/**
 * Records what became of deliveries, whatever made them, with group commit (see
 * BatchQueue): every result that came in while the previous statement was in flight is
 * recorded by the next one (record-results.ts); on a distributed PostgreSQL
 * (`distributed`) one per account, run concurrently, each routed to its account's shard
 * (docs/scaling.md), and an account's statement that fails fails only its results. For
 * an event with several deliveries the status a result resolves with is the summary of
 * them all, read after it committed.
 */
export class AttemptRecorder {
  readonly #orm: Orm;
  readonly #queue: BatchQueue<RecordInput, RecordedDelivery>;
  readonly #onEndpointsDisabled: (endpointIds: string[]) => void;
  readonly #distributed: boolean;

  /** `distributed`: the database is distributed by account (HOOK_DATABASE_DISTRIBUTED), see above. */
  constructor(orm: Orm, options: { onEndpointsDisabled?: (endpointIds: string[]) => void; distributed?: boolean } = {}) {
    this.#orm = orm;
    this.#onEndpointsDisabled = options.onEndpointsDisabled ?? (() => undefined);
    this.#distributed = options.distributed === true;
    this.#queue = new BatchQueue<RecordInput, RecordedDelivery>({
      flush: (inputs) => this.#flush(inputs),
      // Nobody's slot waits for a result to be recorded (a worker's and a session's are
      // free once the destination answered): under load a statement gathers up to 50
      // results for 2 ms, which costs PostgreSQL 0.06 ms a result against 0.16 ms at 5
      // (test/bench/queue-floor.ts).
      gatherMs: RECORD_GATHER_MS,
      gatherItems: 50,
      ...(this.#distributed ? { groupOf: (input: RecordInput) => input.delivery.accountId } : {}),
    });
  }

  async #flush(inputs: RecordInput[]): Promise<RecordedDelivery[]> {
    const outcome = await recordResults(this.#orm, inputs, { distributed: this.#distributed });
    if (outcome.disabledEndpoints.length > 0) this.#onEndpointsDisabled(outcome.disabledEndpoints);
    // The summaries read back, one statement per account (each routed to its shard, docs/scaling.md).
    const fannedOut = Map.groupBy(inputs.filter((input, i) => outcome.results[i]!.held && outcome.results[i]!.deliveryCount > 1), (input) => input.delivery.accountId);
    const summaries = new Map((await Promise.all([...fannedOut].map(([accountId, held]) => summarizeEvents(this.#orm, accountId, held.map((input) => input.delivery.id))))).flatMap((found) => [...found]));
    return inputs.map((input, i) => {
      const result = outcome.results[i]!;
      return { held: result.held, eventStatus: result.held ? (summaries.get(input.delivery.id)?.status ?? result.eventStatus) : null };
    });
  }

  /** Records one result; resolves once it is committed. */
  record(input: RecordInput): Promise<RecordedDelivery> {
    return this.#queue.add(input);
  }

  async drain(): Promise<void> {
    await this.#queue.drain();
  }
}
