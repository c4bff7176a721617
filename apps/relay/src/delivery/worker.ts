import { claimDueEvents, listenForDueEvents, refreshQueueStatistics, releaseLease, type DueListener, type Orm } from '@hook/db';
import { attemptDelivery, type AttemptContext } from './attempt.ts';

export interface DeliveryWorkerOptions {
  context: AttemptContext;
  databaseUrl: string;
  /** Most deliveries in flight in this worker. */
  concurrency: number;
  /** Most deliveries in flight to one endpoint across all workers. Default: half of `concurrency`, at least 1, so a slow destination leaves the other half to everyone else. */
  perEndpointLimit?: number;
  /** How long a claim holds; must outlast an attempt (timeout) with margin. */
  leaseMs: number;
  /** How often to look for due events without a notification (retries come due this way). Default 1000 ms. */
  pollIntervalMs?: number;
  /** How often to refresh the queue's planner statistics (see refreshQueueStatistics). Default 30 s. */
  statisticsIntervalMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Delivers due events: claims as many as it has free slots, sends each without waiting
 * for the others, and claims again as slots free up. Wakes on NOTIFY (new events),
 * on its poll timer (retries coming due) and when a delivery it made schedules a retry
 * sooner than the next poll.
 */
export class DeliveryWorker {
  readonly #options: DeliveryWorkerOptions;
  readonly #perEndpointLimit: number;
  readonly #pollIntervalMs: number;
  #listener: DueListener | undefined;
  #inFlight = new Set<Promise<void>>();
  #running = false;
  #claiming = false;
  #wakeAgain = false;
  #timer: NodeJS.Timeout | undefined;
  #nextWakeAtMs = Infinity;
  #statisticsTimer: NodeJS.Timeout | undefined;

  constructor(options: DeliveryWorkerOptions) {
    this.#options = options;
    this.#perEndpointLimit = options.perEndpointLimit ?? Math.max(1, Math.ceil(options.concurrency / 2));
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
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
    this.#listener = await listenForDueEvents(this.#options.databaseUrl, () => this.wake(), (error) => this.#options.onError?.(error));
    this.wake();
  }

  /** Looks for due events now. Safe to call any time; calls made during a claim coalesce into one more claim. */
  wake(): void {
    if (!this.#running) return;
    if (this.#claiming) {
      this.#wakeAgain = true;
      return;
    }
    void this.#claimAndDeliver();
  }

  async #claimAndDeliver(): Promise<void> {
    this.#claiming = true;
    try {
      do {
        this.#wakeAgain = false;
        const free = this.#options.concurrency - this.#inFlight.size;
        if (free <= 0) break;
        const claimed = await claimDueEvents(this.orm, { limit: free, leaseMs: this.#options.leaseMs, perEndpointLimit: this.#perEndpointLimit });
        for (const delivery of claimed) {
          if (!this.#running) {
            await releaseLease(this.orm, delivery);
            continue;
          }
          const work: Promise<void> = attemptDelivery(this.#options.context, delivery)
            .then(({ next }) => {
              // A retry due before the next poll: wake for it rather than make it wait.
              if (next.nextAttemptAtMs !== null) this.#armTimer(next.nextAttemptAtMs - Date.now() + 1);
            })
            .catch((error: unknown) => this.#options.onError?.(error))
            .finally(() => {
              this.#inFlight.delete(work);
              this.wake(); // a slot is free
            });
          this.#inFlight.add(work);
        }
        if (claimed.length === free) this.#wakeAgain = true; // there may be more due
      } while (this.#wakeAgain && this.#running);
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      this.#claiming = false;
      this.#armPoll();
    }
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
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#statisticsTimer) clearInterval(this.#statisticsTimer);
    await this.#listener?.close();
    while (this.#claiming || this.#inFlight.size > 0) {
      await Promise.allSettled([...this.#inFlight]);
      if (this.#claiming) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
