import { randomToken } from '@hook/core';
import { claimDue, listenForDueEvents, refreshQueueStatistics, releaseLease, type ClaimedDelivery, type DueListener, type Orm } from '@hook/db';
import { attemptDelivery, type AttemptContext } from './attempt.ts';

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
  /** Where this process's ingest finds the worker, to hand it new events directly (see LocalDelivery). */
  local?: LocalDelivery;
}

/** A delivery slot reserved by ingest for an event about to be stored (see DeliveryWorker.reserve). */
export interface ReservedSlot {
  /** The lease to store the event's delivery under. */
  lease: { id: string; ms: number; destinationType: 'url' | 'cli' };
  /** The event was stored claimed: deliver it. */
  deliver(delivery: ClaimedDelivery): void;
  /** The event was stored unclaimed (its endpoint was paused, say) or not at all: free the slot. */
  cancel(): void;
}

/** A slot whose `deliver` or `cancel` takes effect once, whichever comes first. */
export function reservedSlot(lease: ReservedSlot['lease'], onDeliver: (delivery: ClaimedDelivery) => void, onCancel: () => void): ReservedSlot {
  let settled = false;
  const once = <A extends unknown[]>(act: (...args: A) => void) => (...args: A): void => {
    if (settled) return;
    settled = true;
    act(...args);
  };
  return { lease, deliver: once(onDeliver), cancel: once(onCancel) };
}

/**
 * Where ingest finds the delivery worker of its own process, when there is one
 * (HOOK_ROLE=all). Events it can take are stored already claimed and delivered at once:
 * no NOTIFY round trip and no claim statement per event, which is most of an idle
 * relay's latency and much of a busy one's database work.
 */
export class LocalDelivery {
  #worker: DeliveryWorker | undefined;

  attach(worker: DeliveryWorker): void {
    this.#worker = worker;
  }

  detach(worker: DeliveryWorker): void {
    if (this.#worker === worker) this.#worker = undefined;
  }

  /** A slot for a new event's delivery to this destination, or null when the worker has none to spare. */
  reserve(destinationId: string, eventId: string): ReservedSlot | null {
    return this.#worker?.reserve(destinationId, eventId) ?? null;
  }
}

/** Under a backlog, the longest a freed slot waits for others before a claim (DeliveryWorker.wake, and a listen session's). */
export const BACKLOG_CLAIM_DELAY_MS = 5;

/**
 * Delivers due deliveries to URL destinations: claims as many as it has free slots, sends
 * each without waiting for the others (attempt.ts), and claims again as slots free up.
 * Wakes on NOTIFY (new events), on its poll timer (retries coming due) and when a
 * delivery it made schedules a retry sooner than the next poll.
 */
export class DeliveryWorker {
  readonly #options: DeliveryWorkerOptions;
  readonly #perDestinationLimit: number;
  readonly #pollIntervalMs: number;
  #listener: DueListener | undefined;
  #inFlight = new Set<Promise<void>>();
  /** Deliveries in flight or reserved, per destination, in this worker. */
  #perDestination = new Map<string, number>();
  /** Slots reserved by ingest whose events are not committed yet. */
  #reserved = 0;
  /**
   * Whether due events may be waiting in the database: the last claim filled every free
   * slot, or a wake found none free. Ingest then leaves new events to the queue, so they
   * line up behind the backlog instead of overtaking it.
   */
  #backlogged = true;
  readonly #leaseToken = randomToken(9);
  /** Deliveries finished since the last claim. */
  #freedSinceClaim = 0;
  /** Under a backlog, the fewest freed slots worth a claim statement (see wake). */
  readonly #minClaim: number;
  #running = false;
  #claiming = false;
  #wakeAgain = false;
  #timer: NodeJS.Timeout | undefined;
  #nextWakeAtMs = Infinity;
  #statisticsTimer: NodeJS.Timeout | undefined;

  constructor(options: DeliveryWorkerOptions) {
    this.#options = options;
    this.#perDestinationLimit = options.perDestinationLimit ?? Math.max(1, Math.ceil(options.concurrency / 2));
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#minClaim = Math.max(1, Math.floor(this.#perDestinationLimit / 4));
  }

  get orm(): Orm {
    return this.#options.context.orm;
  }

  async start(): Promise<void> {
    this.#running = true;
    await refreshQueueStatistics(this.orm);
    this.#statisticsTimer = setInterval(() => {
      refreshQueueStatistics(this.orm).catch((error: unknown) => this.#options.onError?.(error));
    }, this.#options.statisticsIntervalMs ?? 30_000);
    this.#statisticsTimer.unref();
    this.#options.local?.attach(this);
    this.#listener = await listenForDueEvents(this.#options.databaseUrl, () => this.wake(), (error) => this.#options.onError?.(error));
    this.wake();
  }

  get #free(): number {
    return this.#options.concurrency - this.#inFlight.size - this.#reserved;
  }

  /**
   * Reserves a slot for an event ingest is about to store, so it can be stored claimed
   * and delivered at once. None while due events may be waiting in the queue, while every
   * slot is taken, or while the destination has its share in flight here.
   */
  reserve(destinationId: string, eventId: string): ReservedSlot | null {
    if (!this.#running || this.#backlogged) return null;
    if (this.#free <= 0 || (this.#perDestination.get(destinationId) ?? 0) >= this.#perDestinationLimit) {
      // The event is stored due instead: the queue has a backlog again, claimed as slots free up.
      this.#backlogged = true;
      return null;
    }
    this.#reserved += 1;
    this.#countDestination(destinationId, 1);
    const release = (): void => {
      this.#reserved -= 1;
      this.#countDestination(destinationId, -1);
    };
    return reservedSlot(
      { id: `${this.#leaseToken}.${eventId}.${destinationId}`, ms: this.#options.leaseMs, destinationType: 'url' },
      (delivery) => {
        release();
        this.#start(delivery);
      },
      () => {
        release();
        this.wake();
      },
    );
  }

  #countDestination(destinationId: string, change: number): void {
    const count = (this.#perDestination.get(destinationId) ?? 0) + change;
    if (count > 0) this.#perDestination.set(destinationId, count);
    else this.#perDestination.delete(destinationId);
  }

  /** Looks for due events now. Safe to call any time; calls made during a claim coalesce into one more claim. */
  wake(): void {
    if (!this.#running) return;
    if (this.#claiming) {
      this.#wakeAgain = true;
      return;
    }
    // Under a backlog, claim for several freed slots at once rather than one statement
    // per finished delivery (the claim costs about the same for 1 row as for 8), waiting
    // at most BACKLOG_CLAIM_DELAY_MS for them.
    if (this.#backlogged && this.#freedSinceClaim < this.#minClaim && this.#inFlight.size > 0) {
      this.#armTimer(BACKLOG_CLAIM_DELAY_MS);
      return;
    }
    void this.#claimAndDeliver();
  }

  async #claimAndDeliver(): Promise<void> {
    this.#claiming = true;
    try {
      do {
        this.#wakeAgain = false;
        const free = this.#free;
        if (free <= 0) {
          this.#backlogged = true;
          break;
        }
        this.#freedSinceClaim = 0;
        const claimed = await claimDue(this.orm, { limit: free, leaseMs: this.#options.leaseMs, perDestinationLimit: this.#perDestinationLimit });
        for (const delivery of claimed) this.#start(delivery);
        // More may be due: every free slot was filled, or a destination has its share in
        // flight here (its next deliveries wait for one of those to finish).
        this.#backlogged = claimed.length === free || [...this.#perDestination.values()].some((count) => count >= this.#perDestinationLimit);
        if (this.#backlogged) this.#wakeAgain = true; // there may be more due
      } while (this.#wakeAgain && this.#running);
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      this.#claiming = false;
      this.#armPoll();
    }
  }

  /** Sends a claimed delivery without waiting for it; a shutting-down worker gives it back untried. */
  #start(delivery: ClaimedDelivery): void {
    this.#countDestination(delivery.destinationId, 1);
    const attempt = this.#running
      ? attemptDelivery(this.#options.context, delivery).then(({ next }) => {
        // A retry due before the next poll: wake for it rather than make it wait.
        if (next.nextAttemptAtMs !== null) this.#armTimer(next.nextAttemptAtMs - Date.now() + 1);
      })
      : releaseLease(this.orm, delivery);
    const work: Promise<void> = attempt
      .catch((error: unknown) => this.#options.onError?.(error))
      .finally(() => {
        this.#inFlight.delete(work);
        this.#countDestination(delivery.destinationId, -1);
        this.#freedSinceClaim += 1;
        // A slot is free: claim for it if due deliveries may be waiting. Otherwise there is
        // nothing to look for: new events come with a NOTIFY or through reserve, retries
        // with their timer, the rest with the poll.
        if (this.#backlogged) this.wake();
      });
    this.#inFlight.add(work);
  }

  #armPoll(): void {
    this.#armTimer(this.#pollIntervalMs);
  }

  #armTimer(delayMs: number): void {
    if (!this.#running) return;
    const at = performance.now() + delayMs;
    if (this.#timer && at >= this.#nextWakeAtMs) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#nextWakeAtMs = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#nextWakeAtMs = Infinity;
      this.wake();
    }, Math.max(0, delayMs));
    this.#timer.unref();
  }

  /** Stops claiming and waits for the deliveries in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#options.local?.detach(this);
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#statisticsTimer) clearInterval(this.#statisticsTimer);
    await this.#listener?.close();
    // Reserved slots settle when their events commit (delivered ones are given back untried).
    while (this.#claiming || this.#inFlight.size > 0 || this.#reserved > 0) {
      await Promise.allSettled([...this.#inFlight]);
      if (this.#claiming || this.#reserved > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
