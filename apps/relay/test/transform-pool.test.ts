/**
 * The transformation pool (transformations/pool.ts) on real worker threads: a lost thread
 * fails only its own task and is replaced, accounts past their CPU allowance wait while
 * others go on, a task that waits too long is given back, and deliveries are prepared on
 * a thread (or on the event loop when that is cheaper).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredDelivery } from '../src/delivery/prepare.ts';
import { INLINE_FILTER_MAX_BODY_BYTES, preparationOf } from '../src/delivery/prepare.ts';
import { TransformPool, type TransformPoolOptions } from '../src/transformations/index.ts';
import type { TransformContext, TransformRequest } from '../src/transformations/index.ts';
import { ownBytes } from '../src/transformations/thread-protocol.ts';

const pools: TransformPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function pool(options: Partial<TransformPoolOptions> = {}): TransformPool {
  const created = new TransformPool({ timeoutMs: 100, memoryBytes: 16 * 1024 * 1024, threads: 1, maxQueueWaitMs: 30_000, ...options });
  pools.push(created);
  return created;
}

const request: TransformRequest = { method: 'POST', path: '/', query: '', headers: { 'content-type': 'application/json' }, body: { n: 1 } };
const context: TransformContext = { event_id: 'evt_01', type: null, endpoint: { id: 'ep_01', name: 'shop' } };
const busy = (ms: number) => `addHandler('transform', (request) => { const end = Date.now() + ${ms}; while (Date.now() < end) {} request.headers['x-done'] = '1'; return request; });`;

function delivery(overrides: Partial<StoredDelivery> = {}): StoredDelivery {
  return {
    id: 'evt_01', type: 'order.paid', method: 'POST', path: '', query: '', headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"amount": 100}'), contentType: 'application/json', endpointId: 'ep_01', endpointName: 'shop',
    transformationCode: null, filter: null, ...overrides,
  };
}

describe('TransformPool', () => {
  it('replaces a thread that dies; only the task it was running fails', async () => {
    const threads = pool();
    const first = threads.run(busy(90), request, context, 'acct_a');
    const queued = threads.run(busy(10), request, context, 'acct_b');
    await expect.poll(() => threads.runningTasks).toBe(1);
    await threads.workers[0]!.terminate();
    const lost = await first;
    expect(lost.ok).toBe(false);
    expect(lost.ok === false && lost.error.message).toMatch(/^Sandbox error: the transformation thread exited/);
    // The queued task runs on the replacement thread.
    const next = await queued;
    expect(next.ok && next.request.headers['x-done']).toBe('1');
    expect(threads.replacedThreads).toBe(1);
    expect(threads.workers).toHaveLength(1);
  });

  it('sends a cheap account\'s next tasks ahead; if the thread dies, those that had not started run on its replacement', async () => {
    const threads = pool();
    // Known cheap (its recent runs took well under a millisecond): its next tasks are sent to the thread before the one ahead is done.
    for (let i = 0; i < 20; i++) expect((await threads.run(busy(0), request, context, 'acct_cheap')).ok).toBe(true);
    const runs = [1, 2, 3].map(() => threads.run(busy(60), request, context, 'acct_cheap'));
    await expect.poll(() => threads.runningTasks).toBe(3);
    await threads.workers[0]!.terminate();
    const outcomes = await Promise.all(runs);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([false, true, true]);
  });

  it('a lost thread makes a delivery fail retryably, with the reason', async () => {
    const threads = pool();
    const prepared = threads.prepare(delivery({ transformationCode: busy(90) }), true, 'acct_a');
    await expect.poll(() => threads.runningTasks).toBe(1);
    await threads.workers[0]!.terminate();
    expect(await prepared).toEqual({ kind: 'failed', retryable: true, error: expect.stringMatching(/^transformation_failed: Sandbox error: the transformation thread exited/) });
  });

  it('holds back an account past its CPU allowance while another account goes on, and says so once', async () => {
    const throttled: string[] = [];
    const used = new Map<string, number>();
    const threads = pool({
      allowanceFor: async (accountId) => (accountId === 'acct_small' ? 6 : null), // 6 ms of CPU per minute: refills at 0.1 ms a second
      onThrottled: (accountId) => throttled.push(accountId),
      onCpuUsed: (accountId, cpuMs) => used.set(accountId, (used.get(accountId) ?? 0) + cpuMs),
      maxQueueWaitMs: 1_500,
    });
    // One 80 ms run spends the minute's 6 ms many times over.
    expect((await threads.run(busy(80), request, context, 'acct_small')).ok).toBe(true);
    expect(throttled).toEqual(['acct_small']);
    expect(used.get('acct_small')).toBeGreaterThan(6);
    const held = threads.run(busy(80), request, context, 'acct_small');
    const started = performance.now();
    const other = await threads.run(busy(20), request, context, 'acct_other');
    expect(other.ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
    // Still out of allowance when its wait ran out: given back, not run.
    const outcome = await held;
    expect(outcome.ok === false && outcome.error.message).toBe('The transformation sandbox is busy; try again in a moment');
    expect(threads.deferredTasks).toBe(1);
  });

  it('charges the account for a run that ends in its thread being replaced: the wall time it held the thread', async () => {
    const used = new Map<string, number>();
    const throttled: string[] = [];
    const threads = pool({
      timeoutMs: 5_000, stuckAfterMs: 300,
      allowanceFor: async () => 200, // 200 ms a minute: one 300 ms hold spends it
      onThrottled: (accountId) => throttled.push(accountId),
      onCpuUsed: (accountId, cpuMs) => used.set(accountId, (used.get(accountId) ?? 0) + cpuMs),
    });
    const outcome = await threads.run(busy(2_000), request, context, 'acct_stuck');
    expect(outcome.ok === false && outcome.error.message).toMatch(/did not finish within 300 ms and was replaced/);
    expect(threads.replacedThreads).toBe(1);
    expect(used.get('acct_stuck')).toBeGreaterThanOrEqual(300);
    expect(throttled).toEqual(['acct_stuck']);
    expect(await threads.throttled('acct_stuck')).toMatchObject({ perMinuteMs: 200, waitMs: expect.any(Number) });
    expect(await threads.throttled('acct_other')).toBeNull();
  });

  it('answers a result nested thousands of levels deep with an error naming the limit, without holding the thread', async () => {
    const threads = pool();
    const deep = "addHandler('transform', (request) => { let a = []; for (let i = 0; i < 5000; i++) a = [a]; request.body = a; return request; });";
    const outcome = await threads.run(deep, request, context, 'acct_deep');
    expect(outcome.ok === false && outcome.error.message).toBe('The transformed request is nested deeper than 1000 levels');
    expect(threads.replacedThreads).toBe(0);
    const next = await threads.run(busy(0), request, context, 'acct_other');
    expect(next.ok).toBe(true);
  });

  it('fails at once a request too deep to hand to a thread, and the thread goes on with the next', async () => {
    const threads = pool();
    let body: unknown = [];
    for (let i = 0; i < 20_000; i++) body = [body];
    const started = performance.now();
    const outcome = await threads.run(busy(0), { ...request, body }, context, 'acct_deep');
    expect(outcome.ok === false && outcome.error.message).toMatch(/^Sandbox error: the request could not be handed to a transformation thread/);
    const next = await threads.run(busy(0), request, context, 'acct_other');
    expect(next.ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(3_000); // the thread is not waited on until it is taken for stuck (6 s)
    expect(threads.replacedThreads).toBe(0);
  });

  it('gives a delivery back (deferred) when no thread is free in time', async () => {
    const threads = pool({ maxQueueWaitMs: 100 });
    const running = threads.prepare(delivery({ transformationCode: busy(90) }), true, 'acct_a');
    const waiting = threads.prepare(delivery({ transformationCode: busy(90) }), true, 'acct_a');
    const late = threads.prepare(delivery({ transformationCode: busy(90) }), true, 'acct_a');
    const outcomes = await Promise.all([running, waiting, late]);
    expect(outcomes[0]!.kind).toBe('send');
    expect(outcomes.filter((outcome) => outcome.kind === 'deferred').length).toBeGreaterThanOrEqual(1);
  });

  it('prepares a transformed delivery on a thread: parsed body in, bytes out', async () => {
    const threads = pool();
    const prepared = await threads.prepare(delivery({
      transformationCode: "addHandler('transform', (request) => { request.body = { total: request.body.amount * 2 }; return request; });",
    }), true, 'acct_a');
    expect(prepared.kind).toBe('send');
    const sent = prepared.kind === 'send' ? prepared.request : null;
    expect(Buffer.isBuffer(sent?.body)).toBe(true);
    expect(sent?.body.toString()).toBe('{"total":200}');
    // Only its own bytes crossed back: not the 64 KiB pool slab a small Buffer lives in.
    expect(sent?.body.buffer.byteLength).toBe(sent?.body.byteLength);
  });

  it('hands a body to a thread as its own bytes: a view into a larger buffer is copied, a whole one is not', () => {
    const slab = Buffer.alloc(65_536);
    slab.write('{"amount": 100}', 1_000);
    const view = slab.subarray(1_000, 1_015);
    const own = ownBytes(view);
    expect(own.buffer.byteLength).toBe(15);
    expect(Buffer.from(own).toString()).toBe('{"amount": 100}');
    const whole = new Uint8Array(15);
    expect(ownBytes(whole)).toBe(whole);
  });

  it('sends tasks submitted together to a thread in one message, once their account is known to be cheap', async () => {
    const threads = pool();
    const cheap = "addHandler('transform', (request) => { request.headers['x-n'] = String(request.body.amount); return request; });";
    // A new account's first task is taken to cost the whole time limit and goes alone; its runs teach the pool it is cheap.
    for (let i = 0; i < 20; i++) expect((await threads.prepare(delivery({ transformationCode: cheap }), true, 'acct_a')).kind).toBe('send');
    const before = { ...threads.posted };
    // Three: a thread is sent cheap work up to 4 ms of expected CPU, and an average read from a coarse CPU clock may be over 1 ms.
    const burst = await Promise.all(Array.from({ length: 3 }, (_, i) => threads.prepare(delivery({ body: Buffer.from(`{"amount": ${i}}`), transformationCode: cheap }), true, 'acct_a')));
    expect(burst.map((prepared) => prepared.kind === 'send' && prepared.request?.headers['x-n'])).toEqual(['0', '1', '2']);
    expect(threads.posted.tasks - before.tasks).toBe(3);
    expect(threads.posted.messages - before.messages).toBe(1);
  });

  it('applies a filter over a small body on the event loop, and over a large one on a thread', async () => {
    let threadTasks = 0; // each task a thread runs is metered
    const threads = pool({ onCpuUsed: () => (threadTasks += 1) });
    const filter = { body: { type: 'order.paid' } };
    const small = delivery({ body: Buffer.from('{"type": "order.refunded"}'), filter });
    // The attempt decides where (preparationOf); the pool only runs what goes to a thread.
    expect(preparationOf(small, true)).toBe('inline');
    expect(preparationOf(small, false)).toBe('untouched'); // a replay skips the filter
    const large = delivery({ body: Buffer.from(JSON.stringify({ type: 'order.paid', pad: 'x'.repeat(INLINE_FILTER_MAX_BODY_BYTES) })), filter });
    expect(preparationOf(large, true)).toBe('sandbox');
    expect(await threads.prepare(large, true, 'acct_a')).toEqual({ kind: 'send', request: null });
    expect(threadTasks).toBe(1);
    expect(preparationOf(delivery({ transformationCode: 'return request' }), false)).toBe('sandbox');
  });
});
