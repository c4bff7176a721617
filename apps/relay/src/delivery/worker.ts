import { randomToken } from '@hook/core';
import { claimDue, listenForDueEvents, refreshQueueStatistics, releaseLease, type ClaimedDelivery, type DueListener, type Orm } from '@hook/db';
import { attemptDelivery, destinationTransport, type AttemptContext, type NextInKeySlot, type Transport } from './attempt.ts';
import { Claimer, type DeliverySlots, type ReservedSlot } from './claimer.ts';
import { startPeriodic, type Periodic } from '../jobs/periodic.ts';

export interface DeliveryWorkerOptions {
  context: AttemptContext;
  databaseUrl: string;
  /** Most deliveries in flight in this worker. */
  concurrency: number;
  /** Most deliveries in flight to one destination across all workers. Default: half of `concurrency`, at least 1, so a slow destination leaves the other half to everyone else. */
  perDestinationLimit?: number;
  /** How long a claim holds; must outlast an attempt (timeout) with margin. */
  leaseMs: number;
  /** How often to look for due events without a notification (retries come due this way). Default 1000 ms. */
  pollIntervalMs?: number;
  /** How often to refresh the queue's planner statistics (see refreshQueueStatistics). Default 30 s. */
  statisticsIntervalMs?: number;
  onError?: (error: unknown) => void;
}

export type { ReservedSlot } from './claimer.ts';

/**
 * Delivers due deliveries to URL destinations: claims as many as it has free slots
 * (the one claimer, claimer.ts, with the workers' statement, claim-due.ts), sends each
 * without waiting for the others (attempt.ts), and claims again as slots free up. A slot
 * is free once the destination answered: the result is recorded (group commit) while
 * the next delivery goes out, under the lease it still holds. Wakes on NOTIFY (new
 * events), on its poll timer (retries coming due) and when a delivery it made schedules
 * a retry sooner than the next poll.
 *
 * It is also where ingest of its own process (HOOK_ROLE=all) hands new events over
 * (`reserve`, as DeliverySlots): those it can take are stored already claimed and
 * delivered at once, with no NOTIFY round trip and no claim statement per event, which
 * is most of an idle relay's latency and much of a busy one's database work.
 */
export class DeliveryWorker implements DeliverySlots {
  readonly #options: DeliveryWorkerOptions;
  readonly #pollIntervalMs: number;
  readonly #claimer: Claimer;
  readonly #transport: Transport;
  readonly #context: AttemptContext;
  #listener: DueListener | undefined;
  readonly #leaseToken = randomToken(9);
  #running = false;
  #pollTimer: NodeJS.Timeout | undefined;
  #statistics: Periodic | undefined;
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  #claims = 0;
  #attempting = 0;

  constructor(options: DeliveryWorkerOptions) {
    this.#options = options;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#transport = destinationTransport(options.context);
    // The shared context, with this worker taking an ordered key's next delivery itself.
    this.#context = { ...options.context, slotForNextInKey: (done: ClaimedDelivery) => this.#slotForNext(done) };
    const perDestinationLimit = options.perDestinationLimit ?? Math.max(1, Math.ceil(options.concurrency / 2));
    const onError = (error: unknown): void => this.#options.onError?.(error);
    this.#claimer = new Claimer({
      slots: options.concurrency,
      perDestinationLimit,
      claim: (limit) => claimDue(this.orm, { limit, leaseMs: options.leaseMs, perDestinationLimit }).finally(() => (this.#claims += 1)),
      start: (delivery, free, wait) => this.#attempt(delivery, free, wait),
      lease: (eventId, destinationId) => ({ id: `${this.#leaseToken}.${eventId}.${destinationId}`, ms: options.leaseMs, destinationType: 'url' }),
      onError,
    });
  }

  get orm(): Orm {
    return this.#options.context.orm;
  }

  /** Claim statements finished so far (read only: tests wait on it to know the worker looked at the queue again). */
  get claims(): number {
    return this.#claims;
  }

  /** Attempts started (claimed, or handed over by ingest) and not yet recorded. */
  get attempting(): number {
    return this.#attempting;
  }

  /** Refreshes the queue's statistics, listens for new events and starts claiming; once. */
  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    if (this.#stopping) return;
    this.#running = true;
    await refreshQueueStatistics(this.orm);
    if (this.#stopping) return;
    this.#statistics = startPeriodic({
      intervalMs: this.#options.statisticsIntervalMs ?? 30_000,
      runAtStart: false,
      pass: () => refreshQueueStatistics(this.orm),
      onError: (error) => this.#options.onError?.(error),
    });
    this.#listener = await listenForDueEvents(this.#options.databaseUrl, () => this.#claimer.wake(), (error) => this.#options.onError?.(error));
    this.#poll();
  }

  /** Claims now, and again every poll interval: retries come due without a notification. */
  #poll(): void {
    if (!this.#running) return;
    this.#claimer.wake();
    this.#pollTimer = setTimeout(() => this.#poll(), this.#pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** A slot for a new event's delivery ingest is about to store (see Claimer.reserve). */
  reserve(destinationId: string, eventId: string): ReservedSlot | null {
    return this.#running ? this.#claimer.reserve(destinationId, eventId) : null;
  }

  /** Looks for due deliveries now. */
  wake(): void {
    this.#claimer.wake();
  }

  /** One attempt; a shutting-down worker gives the delivery back untried. Its slot is free once the destination answered. */
  async #attempt(delivery: ClaimedDelivery, free: () => void, wait: (waiting: boolean) => void): Promise<void> {
    if (!this.#running) {
      await releaseLease(this.orm, delivery);
      return;
    }
    this.#attempting += 1;
    try {
      // Its wait for a transformation thread holds no slot (claimer.ts): ingest's shortcut keeps them.
      const { next } = await attemptDelivery(this.#context, delivery, this.#transport, free, wait);
      // A retry due before the next poll: wake for it rather than make it wait.
      if (next.nextAttemptAtMs !== null) this.#claimer.wakeIn(next.nextAttemptAtMs - Date.now() + 1);
    } finally {
      this.#attempting -= 1;
    }
  }

  /**
   * An ordered key's delivery was done: a slot of this worker for the key's next one, to
   * take now (ordering.ts NEXT_IN_KEY) without waiting for a notification and a claim, so
   * one key's events follow each other at the pace of the receiver and the database. Null
   * when no slot is free (the next is then made due).
   */
  #slotForNext(done: ClaimedDelivery): NextInKeySlot | null {
    if (!this.#running || done.orderingKey === null) return null;
    const slot = this.#claimer.reserve(done.destinationId, done.id);
    if (!slot) return null;
    return {
      lease: { token: this.#leaseToken, ms: this.#options.leaseMs },
      start: (next) => (next ? slot.deliver(next) : slot.cancel()),
    };
  }

  /** Stops claiming and waits for the deliveries in flight to finish and be recorded (a start under way first ends). */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    this.#running = false;
    if (this.#pollTimer) clearTimeout(this.#pollTimer);
    // Claims stop at once; a start under way ends before its connection is closed.
    const stopped = this.#claimer.stop();
    await this.#starting?.catch(() => undefined);
    if (this.#pollTimer) clearTimeout(this.#pollTimer);
    await this.#statistics?.();
    await this.#listener?.close();
    // Reserved slots settle when their events commit (delivered ones are given back untried).
    await stopped;
  }
}
