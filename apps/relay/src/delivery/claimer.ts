/**
 * The one claimer: how a delivery worker (URL destinations) and a `hook listen` session
 * (its `cli` destination) take deliveries from the queue. Both hold a number of slots;
 * each delivery in flight holds one, from its claim (or reservation) until its
 * destination has answered. The claimer decides when to claim and for how many:
 *
 * - Without a backlog, nothing is waiting in the queue: new events are handed over as
 *   ingest stores them (`reserve`: stored already claimed, no claim statement), and
 *   retries come with a timer (`wakeIn`) or the owner's poll.
 * - Under a backlog (a claim filled every free slot, or ingest found none free), a freed
 *   slot claims again, but for several at once: it waits until a quarter of the
 *   destination share is free, or BACKLOG_CLAIM_DELAY_MS, since a claim costs about the
 *   same for 1 row as for 8. New events then go through the queue, behind the backlog,
 *   so they never overtake it.
 * - Claims never overlap: a wake during one makes one more after it.
 * - A delivery waiting for a transformation thread (`wait(true)` … `wait(false)`) gives
 *   its slot back for the wait, into a second bound (`waitSlots`): a thread that other
 *   work deschedules for a moment then leaves ingest's shortcut its slots, instead of
 *   sending every new event through the queue and its claims. Memory stays bounded (at
 *   most slots + waitSlots deliveries held); a delivery whose wait ends takes its slot
 *   back at once, even past `slots` (by at most the waits), since it goes out next.
 *
 * What a claim is (the statement: claim-due.ts for workers, claim-listen.ts for a
 * session) and what happens to a delivery (the attempt, attempt.ts) are the owner's.
 */
import type { ClaimedDelivery } from '@hook/db';

/** Under a backlog, the longest a freed slot waits for others before a claim. */
export const BACKLOG_CLAIM_DELAY_MS = 5;

/** A delivery slot reserved by ingest for an event about to be stored (see Claimer.reserve). */
export interface ReservedSlot {
  /** The lease to store the event's delivery under. */
  lease: { id: string; ms: number; destinationType: 'url' | 'cli' };
  /** The event was stored claimed: deliver it. */
  deliver(delivery: ClaimedDelivery): void;
  /** The event was stored unclaimed (its endpoint was paused, say) or not at all: free the slot. */
  cancel(): void;
}

/** Where ingest gets a slot for a new event's delivery (a process's delivery worker, or its listen sessions: stream/listeners.ts). */
export interface DeliverySlots {
  /** A slot for the delivery of event `eventId` to `destinationId`, or null when none is to spare. */
  reserve(destinationId: string, eventId: string): ReservedSlot | null;
}

export interface ClaimerOptions {
  /** Most deliveries in flight at once. */
  slots: number;
  /** Most in flight to one destination (a session serves one: `slots`). */
  perDestinationLimit: number;
  /** Most deliveries waiting for a transformation thread without a slot (see above). Default: `slots`; 0: waits hold their slots. */
  waitSlots?: number;
  /** Claims up to `limit` due deliveries (the owner's statement). */
  claim: (limit: number) => Promise<ClaimedDelivery[]>;
  /**
   * Starts a delivery that holds a slot (claimed or reserved). `free` gives the slot back
   * (once the destination answered: recording the result needs no slot); `wait(true)`
   * says it now waits for a transformation thread (its slot is lent out if a wait slot is
   * free), `wait(false)` that the wait is over; the promise settles when everything
   * about it is done (stop waits for it).
   */
  start: (delivery: ClaimedDelivery, free: () => void, wait: (waiting: boolean) => void) => Promise<void>;
  /** The lease of a reserved slot: its id (unique per event and destination) and how long it holds. */
  lease: (eventId: string, destinationId: string) => ReservedSlot['lease'];
  onError: (error: unknown) => void;
}

export class Claimer {
  readonly #options: ClaimerOptions;
  /** Slots held: deliveries in flight and slots reserved by ingest. */
  #held = 0;
  /** Slots held per destination. */
  readonly #perDestination = new Map<string, number>();
  /** Deliveries waiting for a transformation thread that gave their slot back for it (at most #waitSlots). */
  #waiting = 0;
  /**
   * Those per destination: their leases still count against the destination's capacity
   * in a claim (claim-due.ts), so a claim that came back short while a destination has
   * its share leased leaves the backlog in place (new events must not overtake it).
   */
  readonly #waitingPerDestination = new Map<string, number>();
  readonly #waitSlots: number;
  /** Deliveries started and not done (stop waits for them). */
  readonly #work = new Set<Promise<void>>();
  /**
   * Deliveries whose slot is free but whose result is not recorded yet: their leases still
   * count against their destinations' capacity in a workers' claim (claim-due.ts), so a
   * claim meanwhile may come back short with deliveries still due; it is made again when
   * one of them is recorded (#claimWhenRecorded).
   */
  #unrecorded = 0;
  #claimWhenRecorded = false;
  /** Results recorded so far (of deliveries freed before): a claim that came back short while one was recorded may have been held back by its lease. */
  #recorded = 0;
  /**
   * Whether due deliveries may be waiting in the queue (see above). True at first: what
   * was waiting before this claimer began is claimed before anything is reserved.
   */
  #backlogged = true;
  /** Slots freed since the last claim, and the fewest worth a claim under a backlog. */
  #freedSinceClaim = 0;
  readonly #minClaim: number;
  #claiming = false;
  #wakeAgain = false;
  #running = true;
  #timer: NodeJS.Timeout | undefined;
  #timerAtMs = Infinity;
  /** stop()s waiting for the last delivery, claim and reserved slot to settle. */
  readonly #whenIdle: (() => void)[] = [];

  constructor(options: ClaimerOptions) {
    this.#options = options;
    this.#minClaim = Math.max(1, Math.floor(options.perDestinationLimit / 4));
    this.#waitSlots = options.waitSlots ?? options.slots;
  }

  get #free(): number {
    return this.#options.slots - this.#held;
  }

  /**
   * A slot for an event ingest is about to store, so that it is stored claimed and
   * delivered at once. None under a backlog, with every slot held, or with the
   * destination's share in flight; the event is then stored due, and there is a backlog.
   */
  reserve(destinationId: string, eventId: string): ReservedSlot | null {
    if (!this.#running || this.#backlogged) return null;
    if (this.#free <= 0 || (this.#perDestination.get(destinationId) ?? 0) >= this.#options.perDestinationLimit) {
      this.#backlogged = true;
      return null;
    }
    this.#hold(destinationId, 1);
    let settled = false;
    return {
      lease: this.#options.lease(eventId, destinationId),
      deliver: (delivery) => {
        if (settled) return;
        settled = true;
        this.#run(delivery);
      },
      cancel: () => {
        if (settled) return;
        settled = true;
        this.#hold(destinationId, -1);
        this.wake();
      },
    };
  }

  /** Looks for due deliveries now. Safe any time; calls during a claim coalesce into one more. */
  wake(): void {
    if (!this.#running) return;
    if (this.#claiming) {
      this.#wakeAgain = true;
      return;
    }
    if (this.#backlogged && this.#freedSinceClaim < this.#minClaim && this.#held > 0) {
      this.wakeIn(BACKLOG_CLAIM_DELAY_MS);
      return;
    }
    void this.#claimWhileDue();
  }

  /** Wakes in `delayMs` (a retry coming due), unless a wake is already set for sooner. */
  wakeIn(delayMs: number): void {
    if (!this.#running) return;
    const at = performance.now() + delayMs;
    if (this.#timer && at >= this.#timerAtMs) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerAtMs = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAtMs = Infinity;
      this.wake();
    }, Math.max(0, delayMs));
    this.#timer.unref();
  }

  async #claimWhileDue(): Promise<void> {
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
        const recordedBefore = this.#recorded;
        const claimed = await this.#options.claim(free);
        for (const delivery of claimed) {
          this.#hold(delivery.destinationId, 1);
          this.#run(delivery);
        }
        // More may be due: every free slot was filled, or a destination has its share in
        // flight (its next deliveries wait for one of those to finish).
        this.#backlogged = claimed.length === free || this.#someDestinationFull();
        // Filled: claim again at once. Short while answered deliveries still hold leases:
        // again once one is recorded, or at once if one was recorded while it ran (its
        // lease may have held this claim back, and nobody would wake it after).
        if (claimed.length === free) this.#wakeAgain = true;
        else if (this.#unrecorded > 0) this.#claimWhenRecorded = true;
        else if (this.#recorded !== recordedBefore) this.#wakeAgain = true;
      } while (this.#wakeAgain && this.#running);
    } catch (error) {
      this.#options.onError(error);
    } finally {
      this.#claiming = false;
      this.#settleIfIdle();
    }
  }

  /** Whether a destination has its share leased: in flight, or lent out while it waits for a thread. */
  #someDestinationFull(): boolean {
    const leased = (destinationId: string) => (this.#perDestination.get(destinationId) ?? 0) + (this.#waitingPerDestination.get(destinationId) ?? 0);
    for (const destinationId of this.#perDestination.keys()) if (leased(destinationId) >= this.#options.perDestinationLimit) return true;
    for (const destinationId of this.#waitingPerDestination.keys()) if (leased(destinationId) >= this.#options.perDestinationLimit) return true;
    return false;
  }

  /** Counts a delivery's wait for a thread with its slot lent out (+1) or its end (−1). */
  #lend(destinationId: string, change: number): void {
    this.#waiting += change;
    addCount(this.#waitingPerDestination, destinationId, change);
  }

  #hold(destinationId: string, change: number): void {
    this.#held += change;
    addCount(this.#perDestination, destinationId, change);
    if (change < 0) this.#settleIfIdle();
  }

  /** Resolves the stop()s waiting, once nothing is claimed, in flight or reserved. */
  #settleIfIdle(): void {
    if (this.#whenIdle.length === 0 || this.#claiming || this.#work.size > 0 || this.#held > 0) return;
    for (const resolve of this.#whenIdle.splice(0)) resolve();
  }

  /** Starts a delivery whose slot is held; frees the slot once (when the owner says, at the latest when it is done). */
  #run(delivery: ClaimedDelivery): void {
    let freed = false;
    let done = false;
    /** Its slot is lent out while it waits for a thread. */
    let lent = false;
    const free = (): void => {
      if (freed) return;
      freed = true;
      if (!done) this.#unrecorded += 1;
      if (lent) {
        lent = false;
        this.#lend(delivery.destinationId, -1);
      } else {
        this.#hold(delivery.destinationId, -1);
        this.#freedSinceClaim += 1;
      }
      // Under a backlog, claim for it; otherwise nothing waits (see above).
      if (this.#backlogged) this.wake();
    };
    const wait = (waiting: boolean): void => {
      if (freed) return;
      if (waiting && !lent && this.#waiting < this.#waitSlots) {
        lent = true;
        this.#lend(delivery.destinationId, 1);
        this.#hold(delivery.destinationId, -1);
        this.#freedSinceClaim += 1;
        if (this.#backlogged) this.wake();
      } else if (!waiting && lent) {
        lent = false;
        this.#lend(delivery.destinationId, -1);
        this.#hold(delivery.destinationId, 1);
      }
    };
    const work: Promise<void> = this.#options.start(delivery, free, wait)
      .catch((error: unknown) => this.#options.onError(error))
      .finally(() => {
        done = true;
        this.#work.delete(work);
        if (freed) {
          this.#unrecorded -= 1;
          this.#recorded += 1;
          // Its lease is gone now: a claim it held back can take more.
          if (this.#claimWhenRecorded) {
            this.#claimWhenRecorded = false;
            this.wake();
          }
        } else free();
        this.#settleIfIdle();
      });
    this.#work.add(work);
  }

  /** Stops claiming and reserving; resolves once every delivery started is done and every reserved slot settled. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    // Deliveries end by themselves, a claim in flight when it returns, a reserved slot when its event commits.
    await new Promise<void>((resolve) => {
      this.#whenIdle.push(resolve);
      this.#settleIfIdle();
    });
  }

  /** Stops at once, for an owner whose deliveries end by themselves (a closed session: they are given back). */
  close(): void {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
  }
}

/** Adds `change` to `key`'s count, leaving no entry at zero. */
function addCount(counts: Map<string, number>, key: string, change: number): void {
  const count = (counts.get(key) ?? 0) + change;
  if (count > 0) counts.set(key, count);
  else counts.delete(key);
}
