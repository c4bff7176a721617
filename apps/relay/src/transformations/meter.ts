/**
 * Transformation CPU, metered per account: what the pool measured on its threads is
 * added up here and written to the account's monthly usage every few seconds (one
 * statement for all accounts), and once more when the relay stops.
 */
import { addTransformationCpu, type Orm } from '@hook/db';
import { startPeriodic, type Periodic } from '../jobs/periodic.ts';

/** How often metered CPU is written to the database. */
export const METER_FLUSH_INTERVAL_MS = 5_000;

export class TransformationMeter {
  readonly #orm: Orm;
  readonly #onError: (error: unknown) => void;
  #pending = new Map<string, number>();
  readonly #flusher: Periodic;
  #flushing: Promise<void> = Promise.resolve();

  constructor(orm: Orm, onError: (error: unknown) => void, flushIntervalMs = METER_FLUSH_INTERVAL_MS) {
    this.#orm = orm;
    this.#onError = onError;
    // Each flush keeps what it could not write (it never throws), so the job has no error of its own.
    this.#flusher = startPeriodic({ intervalMs: flushIntervalMs, runAtStart: false, pass: () => this.flush() });
  }

  add(accountId: string, cpuMs: number): void {
    this.#pending.set(accountId, (this.#pending.get(accountId) ?? 0) + cpuMs);
  }

  /** Writes what was metered since the last flush; on failure it is kept for the next one. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      // Whole milliseconds are written; what is left over waits for the next flush.
      const batch = new Map<string, number>();
      for (const [account, cpuMs] of this.#pending) {
        const whole = Math.floor(cpuMs);
        if (whole === 0) continue;
        batch.set(account, whole);
        if (cpuMs - whole > 0) this.#pending.set(account, cpuMs - whole);
        else this.#pending.delete(account);
      }
      if (batch.size === 0) return;
      try {
        await addTransformationCpu(this.#orm, batch, new Date());
      } catch (error) {
        for (const [account, cpuMs] of batch) this.add(account, cpuMs);
        this.#onError(error);
      }
    });
    return this.#flushing;
  }

  /** Stops the periodic flush and writes what is left. */
  async close(): Promise<void> {
    await this.#flusher();
    await this.flush();
  }
}
