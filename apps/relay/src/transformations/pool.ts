/**
 * Transformations off the event loop: a pool of worker threads (thread.ts), each with
 * its own QuickJS runner, that prepares deliveries (body parse, filter, transformation,
 * serialisation) and runs transformation tests and checks. See docs/transformations.md.
 *
 * Our own pool on node:worker_threads rather than piscina: what it must do beyond
 * handing tasks to threads is decide WHICH task goes next (per-account queues served in
 * turn, accounts past their CPU allowance held back) and what a lost thread means (only
 * its own task fails, a new thread takes its place), and a general pool's single queue
 * would have to be rebuilt around that anyway. The rest is ~100 lines.
 *
 * - Fair shares: each account has its own queue; a free thread takes the oldest task of
 *   the next account in turn, so an account with a thousand slow tasks waiting delays
 *   another account's task by at most one task per thread.
 * - CPU allowance: each task's CPU time (measured on its thread) is metered per account
 *   against a token bucket holding a minute of the plan's allowance. An account past it
 *   waits until the bucket refills, so its deliveries slow down and nobody else's do;
 *   `onThrottled` fires each time an account runs out (the database sends the account's
 *   notification once a month).
 * - Pipelined when cheap: a thread is handed its next task while it still has work that
 *   is expected (from each account's recent CPU per task) to take under
 *   PIPELINE_BUDGET_MS, so a thread running small transformations never sits idle
 *   waiting for the event loop to send the next one; a slow task is never queued behind
 *   another on a thread, so fairness holds to within that budget.
 * - Waiting, not failing: a task that waits longer than `maxQueueWaitMs` for a thread is
 *   given back (`deferred`): its delivery is tried again later, with no attempt counted,
 *   so its lease never runs out while it waits.
 */
import { Worker } from 'node:worker_threads';
import { transformationFailedError, type PreparedDelivery, type StoredDelivery } from '../delivery/prepare.ts';
import { ownBytes, type ThreadReply, type ThreadSettings, type ThreadTask } from './thread-protocol.ts';
import type { TransformContext, TransformError, TransformLimits, TransformOutcome, TransformRequest, TransformRunner } from './types.ts';

/** How long the allowance of an account is remembered before it is read again (a plan change takes effect within this). */
const ALLOWANCE_TTL_MS = 60_000;
const MINUTE_MS = 60_000;
/** How much expected work (ms of CPU) a thread may hold before it gets no more (see the pipelining note above). */
const PIPELINE_BUDGET_MS = 4;
/** Most tasks sent to one thread and not yet answered. */
const PIPELINE_MAX_TASKS = 32;
/** The weight of the newest run in an account's average CPU per task. */
const COST_SMOOTHING = 0.2;

export interface TransformPoolOptions extends TransformLimits {
  /** Worker threads (at least 1). */
  threads: number;
  /** Longest a task waits for a thread before it is given back (deferred). */
  maxQueueWaitMs: number;
  /** An account's transformation CPU allowance in ms per minute; null: not metered. Default: none metered. */
  allowanceFor?: (accountId: string) => Promise<number | null>;
  /** An account ran out of its CPU allowance (called at each time it runs out). */
  onThrottled?: (accountId: string) => void;
  /** CPU an account's task used, in ms (for usage metering). */
  onCpuUsed?: (accountId: string, cpuMs: number) => void;
  /** Sandboxes each thread keeps warm (see runner.ts). */
  maxCachedSandboxes?: number;
  /** Memory each thread's cached sandboxes may hold beyond their base (see runner.ts). */
  poolMemoryBytes?: number;
  /** How long a task may hold its thread before the thread is taken for stuck and replaced. Default 10 × timeoutMs + 5 s. */
  stuckAfterMs?: number;
}

type TaskMessage = ThreadTask extends infer T ? (T extends ThreadTask ? Omit<T, 'id'> : never) : never;

/** How a task ended: its thread's reply, given back unrun, or lost with its thread. */
type TaskEnd = { kind: 'reply'; reply: ThreadReply } | { kind: 'deferred' } | { kind: 'lost'; reason: string };

interface Task {
  message: TaskMessage;
  account: string;
  settle: (end: TaskEnd) => void;
  /** While it waits in its account's queue: gives it back (deferred) after maxQueueWaitMs. */
  waitTimer?: NodeJS.Timeout;
}

interface Sent {
  task: Task;
  stuckTimer: NodeJS.Timeout;
  /** The CPU it was expected to take (its account's average). */
  expectedMs: number;
  /** performance.now() when it was sent. */
  sentAtMs: number;
}

interface Thread {
  worker: Worker;
  /** Tasks sent and not answered, by id, in the order the thread runs them: the first is running. */
  sent: Map<number, Sent>;
  /** Sum of the sent tasks' expected CPU. */
  loadMs: number;
  /** performance.now() of its last answer: about when the task it runs now started (or when that was sent, if later). */
  answeredAtMs: number;
  /** Why it stopped, once known (an uncaught error, or taken for stuck). */
  stopReason?: string;
}

interface Bucket {
  perMinuteMs: number | null;
  tokensMs: number;
  updatedAtMs: number;
  fetchedAtMs: number;
  outOfAllowance: boolean;
}

export class TransformPool implements TransformRunner {
  readonly #options: TransformPoolOptions;
  readonly #settings: ThreadSettings;
  readonly #threads = new Set<Thread>();
  /** Per account, its tasks waiting for a thread, oldest first; the Map's order is the turn order. */
  readonly #queues = new Map<string, Task[]>();
  readonly #buckets = new Map<string, Bucket>();
  /** Per account, the average CPU of its recent tasks in ms (unknown: taken as the time limit, so a new account's first task is never pipelined). */
  readonly #costs = new Map<string, number>();
  #nextTaskId = 0;
  #wakeTimer: NodeJS.Timeout | undefined;
  #dispatchQueued = false;
  #closed = false;
  /** Tasks given back unrun because they waited too long (for metrics and tests). */
  deferredTasks = 0;
  /** Threads replaced after dying or getting stuck (for metrics and tests). */
  replacedThreads = 0;
  /** Messages posted to threads, and the tasks they carried (for tests: tasks submitted together travel together). */
  readonly posted = { messages: 0, tasks: 0 };

  constructor(options: TransformPoolOptions) {
    this.#options = options;
    this.#settings = {
      timeoutMs: options.timeoutMs,
      memoryBytes: options.memoryBytes,
      ...(options.maxCachedSandboxes !== undefined ? { maxCachedSandboxes: options.maxCachedSandboxes } : {}),
      ...(options.poolMemoryBytes !== undefined ? { poolMemoryBytes: options.poolMemoryBytes } : {}),
    };
    for (let i = 0; i < Math.max(1, options.threads); i++) this.#startThread();
  }

  /** The threads' workers (for tests: a test may terminate one to see it replaced). */
  get workers(): Worker[] {
    return [...this.#threads].map((thread) => thread.worker);
  }

  /** Tasks waiting for a thread, across accounts. */
  get queuedTasks(): number {
    let queued = 0;
    for (const queue of this.#queues.values()) queued += queue.length;
    return queued;
  }

  /** Tasks sent to a thread and not answered yet (running, or next in line on it). */
  get runningTasks(): number {
    let running = 0;
    for (const thread of this.#threads) running += thread.sent.size;
    return running;
  }

  /**
   * Prepares one delivery on a thread (prepareDelivery there): a delivery whose
   * preparation is `sandbox` (delivery/prepare.ts preparationOf decides, once, in the
   * attempt). `deferred`: no thread was free in time, try the delivery again later.
   */
  async prepare(delivery: StoredDelivery, applyFilter: boolean, accountId: string): Promise<PreparedDelivery> {
    const { id, type, method, path, query, headers, body, contentType, endpointId, endpointName, transformationCode } = delivery;
    const end = await this.#submit(accountId, {
      kind: 'prepare',
      delivery: { id, type, method, path, query, headers, body: ownBytes(body), contentType, endpointId, endpointName, transformationCode, filter: delivery.filter },
      applyFilter,
    });
    if (end.kind === 'deferred') return { kind: 'deferred' };
    if (end.kind === 'lost') return { kind: 'failed', retryable: true, error: transformationFailedError(`Sandbox error: ${end.reason}`, null) };
    if (!end.reply.ok) return { kind: 'failed', retryable: true, error: transformationFailedError(`Sandbox error: ${end.reply.error}`, null) };
    const prepared = end.reply.value as PreparedDelivery;
    if (prepared.kind === 'send' && prepared.request) prepared.request.body = Buffer.from(prepared.request.body.buffer, prepared.request.body.byteOffset, prepared.request.body.byteLength);
    return prepared;
  }

  async run(code: string, request: TransformRequest, context: TransformContext, accountId = ''): Promise<TransformOutcome> {
    const end = await this.#submit(accountId, { kind: 'run', code, request, context });
    if (end.kind === 'reply' && end.reply.ok) return end.reply.value as TransformOutcome;
    return { ok: false, error: this.#unfinished(end), logs: [] };
  }

  async check(code: string, accountId = ''): Promise<TransformError | null> {
    const end = await this.#submit(accountId, { kind: 'check', code });
    if (end.kind === 'reply' && end.reply.ok) return end.reply.value as TransformError | null;
    return this.#unfinished(end);
  }

  /** Whether the account is past its CPU allowance: how long until it may run again, and its allowance; null when it may run now. */
  async throttled(accountId: string): Promise<{ waitMs: number; perMinuteMs: number } | null> {
    await this.#loadAllowance(accountId);
    const waitMs = this.#heldForMs(accountId, performance.now());
    const perMinuteMs = this.#buckets.get(accountId)?.perMinuteMs;
    return waitMs > 0 && perMinuteMs != null ? { waitMs, perMinuteMs } : null;
  }

  /** Stops the threads; tasks still waiting are given back (deferred). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#wakeTimer) clearTimeout(this.#wakeTimer);
    for (const queue of this.#queues.values()) for (const task of queue.splice(0)) this.#settle(task, { kind: 'deferred' });
    this.#queues.clear();
    await Promise.all([...this.#threads].map((thread) => thread.worker.terminate()));
  }

  #unfinished(end: TaskEnd): TransformError {
    if (end.kind === 'deferred') return { message: 'The transformation sandbox is busy; try again in a moment', line: null };
    if (end.kind === 'lost') return { message: `Sandbox error: ${end.reason}`, line: null };
    return { message: `Sandbox error: ${(end.reply as { error: string }).error}`, line: null };
  }

  async #submit(accountId: string, message: TaskMessage): Promise<TaskEnd> {
    if (this.#closed) return { kind: 'deferred' };
    if (accountId !== '') await this.#loadAllowance(accountId);
    return new Promise<TaskEnd>((resolve) => {
      this.#enqueue({ message, account: accountId, settle: resolve }, 'back');
      this.#dispatchSoon();
    });
  }

  /**
   * Dispatches once the tasks submitted in this turn of the event loop are all queued:
   * deliveries start in bursts (a group commit of ingest answers many requests at once, a
   * claim returns many rows), and a message to a thread costs about as much as the small
   * transformation it carries (~10 µs each way, whatever it holds), so a burst goes in one.
   */
  #dispatchSoon(): void {
    if (this.#dispatchQueued) return;
    this.#dispatchQueued = true;
    queueMicrotask(() => {
      this.#dispatchQueued = false;
      this.#dispatch();
    });
  }

  /** Puts a task in its account's queue (at the front: one sent to a thread that died before starting it). */
  #enqueue(task: Task, end: 'front' | 'back'): void {
    task.waitTimer = setTimeout(() => {
      const queue = this.#queues.get(task.account);
      const index = queue?.indexOf(task) ?? -1;
      if (index < 0) return;
      queue!.splice(index, 1);
      if (queue!.length === 0) this.#queues.delete(task.account);
      this.deferredTasks += 1;
      task.settle({ kind: 'deferred' });
    }, this.#options.maxQueueWaitMs);
    const queue = this.#queues.get(task.account);
    if (!queue) this.#queues.set(task.account, [task]);
    else if (end === 'front') queue.unshift(task);
    else queue.push(task);
  }

  /** Reads the account's allowance when first seen and after ALLOWANCE_TTL_MS (in the background once known). */
  async #loadAllowance(accountId: string): Promise<void> {
    const lookup = this.#options.allowanceFor;
    if (!lookup) return;
    const now = performance.now();
    const bucket = this.#buckets.get(accountId);
    if (bucket && now - bucket.fetchedAtMs < ALLOWANCE_TTL_MS) return;
    const fetched = lookup(accountId).then((perMinuteMs) => {
      const current = this.#buckets.get(accountId);
      if (current) {
        this.#refill(current, performance.now());
        current.perMinuteMs = perMinuteMs;
        current.fetchedAtMs = performance.now();
        if (perMinuteMs !== null) current.tokensMs = Math.min(current.tokensMs, perMinuteMs);
      } else {
        this.#buckets.set(accountId, { perMinuteMs, tokensMs: perMinuteMs ?? 0, updatedAtMs: performance.now(), fetchedAtMs: performance.now(), outOfAllowance: false });
      }
    });
    if (bucket) {
      bucket.fetchedAtMs = now; // one refresh at a time
      fetched.catch(() => undefined);
    } else {
      await fetched.catch(() => undefined); // unknown: not metered until it can be read
    }
  }

  #refill(bucket: Bucket, now: number): void {
    if (bucket.perMinuteMs === null) return;
    bucket.tokensMs = Math.min(bucket.perMinuteMs, bucket.tokensMs + ((now - bucket.updatedAtMs) * bucket.perMinuteMs) / MINUTE_MS);
    bucket.updatedAtMs = now;
  }

  /** ms until the account may run again (0: now). */
  #heldForMs(account: string, now: number): number {
    const bucket = this.#buckets.get(account);
    if (!bucket || bucket.perMinuteMs === null) return 0;
    this.#refill(bucket, now);
    if (bucket.tokensMs >= 0) return 0;
    return bucket.perMinuteMs > 0 ? (-bucket.tokensMs * MINUTE_MS) / bucket.perMinuteMs : Infinity;
  }

  /** Gives free threads the next tasks: accounts in turn, skipping those past their allowance. */
  #dispatch(): void {
    if (this.#closed) return;
    const now = performance.now();
    let soonestMs = Infinity;
    // What each thread is given in this pass goes in one message.
    const outbox = new Map<Thread, ThreadTask[]>();
    for (;;) {
      // The least loaded thread that can take more: an idle one, or one whose work is cheap.
      let thread: Thread | undefined;
      for (const candidate of this.#threads) {
        if (candidate.sent.size >= PIPELINE_MAX_TASKS || (candidate.sent.size > 0 && candidate.loadMs >= PIPELINE_BUDGET_MS)) continue;
        if (!thread || candidate.loadMs < thread.loadMs) thread = candidate;
      }
      if (!thread) break;
      let chosen: string | undefined;
      for (const account of this.#queues.keys()) {
        const heldMs = this.#heldForMs(account, now);
        if (heldMs > 0) {
          soonestMs = Math.min(soonestMs, heldMs);
          continue;
        }
        // Behind other work only a task expected to be cheap.
        if (thread.sent.size > 0 && thread.loadMs + this.#expectedMs(account) > PIPELINE_BUDGET_MS) continue;
        chosen = account;
        break;
      }
      if (chosen === undefined) break;
      const queue = this.#queues.get(chosen)!;
      const task = queue.shift()!;
      // Its turn is over: the account goes to the back of the line.
      this.#queues.delete(chosen);
      if (queue.length > 0) this.#queues.set(chosen, queue);
      const message = this.#send(thread, task);
      const batch = outbox.get(thread);
      if (batch) batch.push(message);
      else outbox.set(thread, [message]);
    }
    let refused = false;
    for (const [thread, batch] of outbox) refused = this.#post(thread, batch) || refused;
    if (refused) {
      this.#dispatch();
      return;
    }
    if (soonestMs !== Infinity && this.queuedTasks > 0) {
      if (this.#wakeTimer) clearTimeout(this.#wakeTimer);
      this.#wakeTimer = setTimeout(() => {
        this.#wakeTimer = undefined;
        this.#dispatch();
      }, Math.ceil(soonestMs) + 1);
      this.#wakeTimer.unref();
    }
  }

  /**
   * Posts a thread its batch; returns whether a task could not be posted. Structured
   * cloning recurses on this thread's stack, so a request nested thousands of levels deep
   * (a stored event's body, or one given to the test route) cannot be posted: that task
   * alone fails, at once, rather than waiting on its thread for an answer that never comes.
   */
  #post(thread: Thread, batch: ThreadTask[]): boolean {
    try {
      thread.worker.postMessage(batch);
      this.posted.messages += 1;
      this.posted.tasks += batch.length;
      return false;
    } catch {
      for (const message of batch) {
        try {
          thread.worker.postMessage([message]);
        } catch (error) {
          const sent = thread.sent.get(message.id)!;
          clearTimeout(sent.stuckTimer);
          thread.sent.delete(message.id);
          thread.loadMs = thread.sent.size === 0 ? 0 : thread.loadMs - sent.expectedMs;
          this.#settle(sent.task, { kind: 'lost', reason: `the request could not be handed to a transformation thread (${(error as Error).message}); is it nested thousands of levels deep?` });
        }
      }
      return true;
    }
  }

  #expectedMs(account: string): number {
    return this.#costs.get(account) ?? this.#options.timeoutMs;
  }

  /** Records `task` as sent to `thread`; returns the message to send it with. */
  #send(thread: Thread, task: Task): ThreadTask {
    clearTimeout(task.waitTimer);
    const id = ++this.#nextTaskId;
    // Timed from when it was sent; anything queued ahead of it on the thread is cheap (see #dispatch).
    const stuckAfterMs = this.#options.stuckAfterMs ?? this.#options.timeoutMs * 10 + 5_000;
    const stuckTimer = setTimeout(() => {
      thread.stopReason = `the transformation thread did not finish within ${stuckAfterMs} ms and was replaced`;
      void thread.worker.terminate();
    }, stuckAfterMs);
    const expectedMs = this.#expectedMs(task.account);
    thread.sent.set(id, { task, stuckTimer, expectedMs, sentAtMs: performance.now() });
    thread.loadMs += expectedMs;
    return { ...task.message, id } as ThreadTask;
  }

  #startThread(): void {
    const worker = new Worker(new URL('./thread.ts', import.meta.url), { workerData: this.#settings });
    worker.unref();
    const thread: Thread = { worker, sent: new Map(), loadMs: 0, answeredAtMs: performance.now() };
    this.#threads.add(thread);
    worker.on('message', (replies: ThreadReply[]) => {
      thread.answeredAtMs = performance.now();
      for (const reply of replies) {
        const sent = thread.sent.get(reply.id);
        if (!sent) continue;
        clearTimeout(sent.stuckTimer);
        thread.sent.delete(reply.id);
        thread.loadMs = thread.sent.size === 0 ? 0 : thread.loadMs - sent.expectedMs;
        this.#charge(sent.task.account, reply.cpuMs);
        this.#settle(sent.task, { kind: 'reply', reply });
      }
      this.#dispatch();
    });
    worker.on('error', (error) => {
      thread.stopReason ??= `the transformation thread stopped (${error.message})`;
    });
    // Answers that cannot be read here are dropped by Node with only this event: without
    // it their tasks would hold the thread until it was taken for stuck.
    worker.on('messageerror', (error) => {
      thread.stopReason ??= `the transformation thread's answer could not be read (${error.message})`;
      void worker.terminate();
    });
    worker.on('exit', (code) => {
      this.#threads.delete(thread);
      const [running, ...behind] = thread.sent.values();
      thread.sent.clear();
      for (const sent of [running, ...behind]) if (sent) clearTimeout(sent.stuckTimer);
      if (running) {
        // What it ran until now is charged like any run: the wall time it held the thread
        // (its CPU time died with the thread), so an account whose runs keep ending here
        // runs out of its allowance like one whose runs finish.
        if (!this.#closed) this.#charge(running.task.account, performance.now() - Math.max(running.sentAtMs, thread.answeredAtMs));
        this.#settle(running.task, { kind: 'lost', reason: thread.stopReason ?? `the transformation thread exited (code ${code})` });
      }
      // The tasks sent behind it never started: back to the front of their accounts' queues.
      for (const sent of behind.reverse()) {
        if (this.#closed) this.#settle(sent.task, { kind: 'deferred' });
        else this.#enqueue(sent.task, 'front');
      }
      if (this.#closed) return;
      // Only the task it was running is lost; the others go to its replacement.
      this.replacedThreads += 1;
      this.#startThread();
      this.#dispatch();
    });
  }

  /** Counts a finished run's CPU into its account's average and meters it. */
  #charge(account: string, cpuMs: number): void {
    const cost = this.#costs.get(account);
    this.#costs.set(account, cost === undefined ? cpuMs : cost + COST_SMOOTHING * (cpuMs - cost));
    this.#meter(account, cpuMs);
  }

  #meter(account: string, cpuMs: number): void {
    if (account === '') return;
    this.#options.onCpuUsed?.(account, cpuMs);
    const bucket = this.#buckets.get(account);
    if (!bucket || bucket.perMinuteMs === null) return;
    this.#refill(bucket, performance.now());
    bucket.tokensMs -= cpuMs;
    const out = bucket.tokensMs < 0;
    if (out && !bucket.outOfAllowance) this.#options.onThrottled?.(account);
    bucket.outOfAllowance = out;
  }

  #settle(task: Task, end: TaskEnd): void {
    clearTimeout(task.waitTimer);
    task.settle(end);
  }
}

