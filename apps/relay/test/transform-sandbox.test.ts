import { afterAll, describe, expect, it } from 'vitest';
import { createTransformRunner, TransformPool, type TransformContext, type TransformOutcome, type TransformRequest } from '../src/transformations/index.ts';

// The guarantees are checked where the relay runs transformations: on a pool thread (pool.ts,
// around the same QuickJS runner); the tests that tune the runner's own limits use one directly.
const runner = new TransformPool({ timeoutMs: 100, memoryBytes: 16 * 1024 * 1024, threads: 1, maxQueueWaitMs: 30_000 });
afterAll(() => runner.close());

const request = (overrides: Partial<TransformRequest> = {}): TransformRequest => ({
  method: 'POST',
  path: '/hooks',
  query: '',
  headers: { 'content-type': 'application/json', 'x-shop-token': 'abc' },
  body: { order: 42, card: '4242', customer: { name: 'Ada', email: 'ada@example.com' } },
  ...overrides,
});
const context: TransformContext = { event_id: 'evt_01', type: 'order.created', endpoint: { id: 'ep_01', name: 'shop' } };

const handler = (body: string) => `addHandler('transform', (request, context) => {\n${body}\n});`;
const SMALL = handler('request.headers["x-token"] = request.headers["x-shop-token"]; delete request.headers["x-shop-token"]; return request;');

function failed(outcome: TransformOutcome) {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
  return outcome as Extract<TransformOutcome, { ok: false }>;
}
function succeeded(outcome: TransformOutcome) {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
  return outcome as Extract<TransformOutcome, { ok: true }>;
}

/** After hostile code, the same runner still transforms ordinary code. */
async function expectRunnerStillWorks() {
  const outcome = succeeded(await runner.run(SMALL, request(), context));
  expect(outcome.request.headers).toEqual({ 'content-type': 'application/json', 'x-token': 'abc' });
}

describe('transformations that work', () => {
  it('renames a header', async () => {
    const outcome = succeeded(await runner.run(SMALL, request(), context));
    expect(outcome.request).toEqual({ ...request(), headers: { 'content-type': 'application/json', 'x-token': 'abc' } });
    expect(outcome.type).toBeUndefined();
  });

  it('drops body fields', async () => {
    const code = handler('const { card, ...body } = request.body; delete body.customer.email; return { ...request, body };');
    const outcome = succeeded(await runner.run(code, request(), context));
    expect(outcome.request.body).toEqual({ order: 42, customer: { name: 'Ada' } });
  });

  it('turns a form-encoded string into JSON', async () => {
    const code = handler(`
      const fields = {};
      for (const pair of request.body.split('&')) {
        const [key, value = ''] = pair.split('=').map((part) => decodeURIComponent(part.replace(/\\+/g, ' ')));
        fields[key] = value;
      }
      return { ...request, headers: { ...request.headers, 'content-type': 'application/json' }, body: fields };`);
    const outcome = succeeded(await runner.run(code, request({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'amount=12.50&name=Ada+Lovelace&note=a%26b' }), context));
    expect(outcome.request.body).toEqual({ amount: '12.50', name: 'Ada Lovelace', note: 'a&b' });
    expect(outcome.request.headers['content-type']).toBe('application/json');
  });

  it('sets the event type with context.setType and routes by it', async () => {
    const code = handler(`
      if (request.body.order > 10) context.setType('order.large');
      return { ...request, path: '/orders/' + context.type.split('.')[1], query: 'endpoint=' + context.endpoint.name };`);
    const outcome = succeeded(await runner.run(code, request(), context));
    expect(outcome.type).toBe('order.large');
    expect(outcome.request.path).toBe('/orders/created');
    expect(outcome.request.query).toBe('endpoint=shop');
    // The type set by one run does not leak into the next.
    expect(succeeded(await runner.run(code, request({ body: { order: 1 } }), context)).type).toBeUndefined();
  });

  it('captures console output, capped', async () => {
    const code = handler(`console.log('order', request.body.order, { id: context.event_id }); console.warn('careful'); return request;`);
    const outcome = succeeded(await runner.run(code, request(), context));
    expect(outcome.logs).toEqual([{ level: 'log', message: 'order 42 {"id":"evt_01"}' }, { level: 'warn', message: 'careful' }]);
    const noisy = succeeded(await runner.run(handler(`for (let i = 0; i < 500; i++) console.log('x'.repeat(5000)); return request;`), request(), context));
    expect(noisy.logs).toHaveLength(101);
    expect(noisy.logs[0]!.message.length).toBeLessThanOrEqual(1025);
    expect(noisy.logs[100]!.message).toMatch(/400 more console lines were dropped/);
  });

  it('gives each run a fresh request while module-level state persists', async () => {
    const code = `let runs = 0;\n${handler('runs++; request.body.seen = (request.body.seen ?? 0) + 1; request.headers["x-runs"] = String(runs); return request;')}`;
    const first = succeeded(await runner.run(code, request(), context));
    const second = succeeded(await runner.run(code, request(), context));
    expect((first.request.body as { seen: number }).seen).toBe(1);
    expect((second.request.body as { seen: number }).seen).toBe(1);
    expect(Number(second.request.headers['x-runs'])).toBe(Number(first.request.headers['x-runs']) + 1);
  });

  it('accepts an async handler', async () => {
    const outcome = succeeded(await runner.run(handler('await null; return { ...request, path: "/later" };').replace('(request, context) =>', 'async (request, context) =>'), request(), context));
    expect(outcome.request.path).toBe('/later');
  });
});

describe('hostile and broken code ends as ok:false and the runner keeps working', () => {
  it('stops an infinite loop at the deadline, well under a second', async () => {
    const started = performance.now();
    const outcome = failed(await runner.run(handler('while (true) {}'), request(), context));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(outcome.error).toEqual({ message: 'Transformation ran longer than 100 ms', line: expect.any(Number) });
    await expectRunnerStillWorks();
  });

  it('stops an infinite loop in top-level code', async () => {
    const outcome = failed(await runner.run('while (true) {}', request(), context));
    expect(outcome.error.message).toBe('Transformation ran longer than 100 ms');
    await expectRunnerStillWorks();
  });

  it('stops a memory bomb', async () => {
    const started = performance.now();
    const outcome = failed(await runner.run(handler(`let a = []; while (true) a.push('x'.repeat(1e6) + a.length);`), request(), context));
    expect(performance.now() - started).toBeLessThan(3000);
    expect(outcome.error.message).toMatch(/^Transformation (used more than 16 MiB|ran longer than 100 ms)$/);
    await expectRunnerStillWorks();
    const arrays = failed(await runner.run(handler('const keep = []; while (true) keep.push(new Array(1e5).fill(1));'), request(), context));
    expect(arrays.error.message).toMatch(/^Transformation (used more than 16 MiB|ran longer than 100 ms)$/);
    await expectRunnerStillWorks();
  });

  it('stops deep recursion', async () => {
    const outcome = failed(await runner.run(`function down(n) { return down(n + 1) + 1; }\n${handler('return down(0);')}`, request(), context));
    expect(outcome.error).toEqual({ message: 'Transformation overflowed its stack (too deep recursion)', line: 1 });
    await expectRunnerStillWorks();
  });

  it('has no process, require, fetch, timers or host Function', async () => {
    const code = handler(`
      let reached;
      try { reached = typeof globalThis.constructor.constructor('return process')(); } catch (error) { reached = 'threw ' + error.name; }
      return { ...request, body: {
        process: typeof process, require: typeof require, fetch: typeof fetch, setTimeout: typeof setTimeout,
        setInterval: typeof setInterval, queueMicrotask: typeof queueMicrotask, module: typeof module, Buffer: typeof Buffer,
        reached, globals: Object.getOwnPropertyNames(globalThis).filter((name) => /^[a-z]/.test(name)).sort(),
      } };`);
    const outcome = succeeded(await runner.run(code, request(), context));
    expect(outcome.request.body).toEqual({
      process: 'undefined', require: 'undefined', fetch: 'undefined', setTimeout: 'undefined', setInterval: 'undefined',
      queueMicrotask: 'undefined', module: 'undefined', Buffer: 'undefined', reached: 'threw ReferenceError',
      globals: expect.arrayContaining(['addHandler', 'console']),
    });
    const lowercase = (outcome.request.body as { globals: string[] }).globals;
    expect(lowercase.filter((name) => !['addHandler', 'console', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'eval', 'globalThis', 'isFinite', 'isNaN', 'parseFloat', 'parseInt', 'undefined', 'unescape'].includes(name))).toEqual([]);
  });

  it('keeps prototype pollution inside the VM', async () => {
    const code = handler(`
      Object.prototype.polluted = 'yes'; Array.prototype.polluted = 'yes'; JSON.parse = () => ({ hacked: true });
      return { ...request, body: JSON.parse('{"__proto__": {"polluted": "yes"}}'), headers: { ...request.headers, ['__proto__']: 'x' } };`);
    const outcome = await runner.run(code, request(), context);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse('{"a":1}')).toEqual({ a: 1 });
    if (outcome.ok) expect(Object.getPrototypeOf(outcome.request.headers)).toBe(Object.prototype);
    // Another code's sandbox is untouched.
    const other = succeeded(await runner.run(handler('return { ...request, body: { polluted: ({}).polluted ?? null } };'), request(), context));
    expect(other.request.body).toEqual({ polluted: null });
  });

  it('refuses a huge output', async () => {
    const outcome = failed(await runner.run(handler(`return { ...request, body: 'x'.repeat(2 * 1024 * 1024) };`), request(), context));
    expect(outcome.error.message).toBe('The transformed request is larger than 1 MiB');
    await expectRunnerStillWorks();
  });

  it('refuses a result nested deeper than 1000 levels; 1000 is fine', async () => {
    // The request is level 1, its body level 2: the body here nests `levels` arrays.
    const nested = (levels: number) => handler(`let a = []; for (let i = 1; i < ${levels}; i++) a = [a]; request.body = a; return request;`);
    const deep = failed(await runner.run(nested(5000), request(), context));
    expect(deep.error).toEqual({ message: 'The transformed request is nested deeper than 1000 levels', line: null });
    const limit = succeeded(await runner.run(nested(999), request(), context));
    expect(JSON.stringify(limit.request.body).startsWith('[[[')).toBe(true);
    failed(await runner.run(nested(1000), request(), context));
    await expectRunnerStillWorks();
  });

  it("stops the code's own JSON.stringify (and console.log) of a huge shared value at the deadline", async () => {
    // 20,000 references to one 1,000-deep array: QuickJS's native stringify alone would
    // take tens of seconds (its cycle check costs objects × depth) without looking at the clock.
    const shared = 'let d = []; for (let i = 0; i < 1000; i++) d = [d]; const wide = new Array(20000).fill(d);';
    for (const use of ['JSON.stringify(wide);', 'console.log(wide);', 'JSON.stringify(wide, null, 2);']) {
      const started = performance.now();
      const outcome = failed(await runner.run(handler(`${shared} ${use} return request;`), request(), context));
      expect(outcome.error.message).toBe('Transformation ran longer than 100 ms');
      expect(performance.now() - started).toBeLessThan(2000);
    }
    await expectRunnerStillWorks();
  });

  it("keeps JSON.stringify's own behaviour: replacer functions and allow lists, toJSON, indentation", async () => {
    const outcome = succeeded(await runner.run(handler(`
      const value = { b: 1, a: { a: 2, c: 3 }, c: [{ a: 4, z: 5 }], d: { toJSON: () => 'D' }, u: undefined, f: () => 1 };
      request.body = [
        JSON.stringify(value, ['a', 'c']), JSON.stringify(value, (key, v) => (typeof v === 'number' ? v * 10 : v)),
        JSON.stringify([1, { x: 2 }], null, 1), JSON.stringify(undefined), JSON.stringify.length, Object.keys(JSON),
      ];
      try { const loop = {}; loop.self = loop; JSON.stringify(loop); } catch (error) { request.body.push(error.name); }
      return request;`), request(), context));
    expect(outcome.request.body).toEqual([
      '{"a":{"a":2,"c":3},"c":[{"a":4}]}', '{"b":10,"a":{"a":20,"c":30},"c":[{"a":40,"z":50}],"d":"D"}',
      '[\n 1,\n {\n  "x": 2\n }\n]', null, 3, [], 'TypeError',
    ]);
  });

  it('reports a thrown non-Error', async () => {
    const outcome = failed(await runner.run(handler(`throw 'no ' + 'way';`), request(), context));
    expect(outcome.error).toEqual({ message: 'Uncaught "no way"', line: null });
    await expectRunnerStillWorks();
  });

  it('reports a thrown error with its line', async () => {
    const outcome = failed(await runner.run(`// header comment\n${handler('const customer = null;\nreturn customer.name;')}`, request(), context));
    expect(outcome.error).toEqual({ message: "TypeError: cannot read property 'name' of null", line: 4 });
  });

  it('reports a syntax error with its line, from run and check', async () => {
    const code = `addHandler('transform', (request) => {\n  const a = 1;\n  return request +;\n});`;
    expect(failed(await runner.run(code, request(), context)).error).toEqual({ message: expect.stringMatching(/^SyntaxError: /), line: 3 });
    expect(await runner.check(code)).toEqual({ message: expect.stringMatching(/^SyntaxError: /), line: 3 });
    expect(await runner.check(SMALL)).toBeNull();
  });

  it('reports code that never calls addHandler', async () => {
    const message = "The code never called addHandler('transform', (request, context) => request)";
    expect(failed(await runner.run('const transform = (request) => request;', request(), context)).error).toEqual({ message, line: null });
    expect(await runner.check('function transform(request) { return request; }')).toEqual({ message, line: null });
  });

  it('refuses a result that is not a request', async () => {
    expect(failed(await runner.run(handler('return undefined;'), request(), context)).error.message).toMatch(/returned undefined/);
    expect(failed(await runner.run(handler('return { ...request, path: "no-slash" };'), request(), context)).error.message).toMatch(/request.path/);
    expect(failed(await runner.run(handler('return { ...request, headers: { "x-a": "1\\r\\nx-b: 2" } };'), request(), context)).error.message).toMatch(/line break/);
    expect(failed(await runner.run(handler('context.setType(42); return request;'), request(), context)).error).toEqual({ message: expect.stringMatching(/^TypeError: setType/), line: 2 });
  });

  it('gives each sandbox its own memory: 12 MiB of live data works under 16 MiB while a bomb in another sandbox fails', async () => {
    const own = createTransformRunner({ timeoutMs: 1000, memoryBytes: 16 * 1024 * 1024 });
    try {
      // ~12 MiB kept alive at module level, from run to run.
      const big = `const keep = [];\n${handler("if (keep.length === 0) for (let i = 0; i < 12; i++) keep.push('x'.repeat(1024 * 1024 - 2) + String(i).padStart(2, '0')); return { ...request, body: { chunks: keep.length, bytes: keep.reduce((n, s) => n + s.length, 0) } };")}`;
      expect(succeeded(await own.run(big, request(), context)).request.body).toEqual({ chunks: 12, bytes: 12 * 1024 * 1024 });
      const bomb = failed(await own.run(handler("let a = []; while (true) a.push('y'.repeat(1e5) + a.length);"), request(), context));
      expect(bomb.error.message).toBe('Transformation used more than 16 MiB');
      expect(succeeded(await own.run(big, request(), context)).request.body).toEqual({ chunks: 12, bytes: 12 * 1024 * 1024 });
      expect(own.cachedSandboxes).toBe(1); // the bomb's sandbox was thrown away
    } finally {
      await own.close();
    }
  });

  it("leaves another code's cached sandbox usable, its module state intact, after a bomb", async () => {
    const counter = `let runs = 0;\nconst table = Array.from({ length: 1000 }, (_, i) => 'row' + i);\n${handler("runs++; return { ...request, body: { runs, last: table[table.length - 1] } };")}`;
    expect(succeeded(await runner.run(counter, request(), context)).request.body).toEqual({ runs: 1, last: 'row999' });
    expect(succeeded(await runner.run(counter, request(), context)).request.body).toEqual({ runs: 2, last: 'row999' });
    for (const bomb of [handler("const keep = []; while (true) keep.push(new Array(1e5).fill(1));"), "const top = []; while (true) top.push('z'.repeat(1e6) + top.length);"]) {
      expect(failed(await runner.run(bomb, request(), context)).error.message).toBe('Transformation used more than 16 MiB');
    }
    expect(succeeded(await runner.run(counter, request(), context)).request.body).toEqual({ runs: 3, last: 'row999' });
  });

  it('holds a smaller limit: 6 MiB fails under 4 MiB, 2 MiB works', async () => {
    const small = createTransformRunner({ timeoutMs: 1000, memoryBytes: 4 * 1024 * 1024 });
    const allocate = (mib: number) => handler(`const keep = []; for (let i = 0; i < ${mib * 4}; i++) keep.push('m'.repeat(256 * 1024 - 1) + i); return { ...request, body: keep.length };`);
    try {
      expect(failed(await small.run(allocate(6), request(), context)).error.message).toBe('Transformation used more than 4 MiB');
      expect(succeeded(await small.run(allocate(2), request(), context)).request.body).toBe(8);
      expect(succeeded(await small.run(SMALL, request(), context)).request.headers).toEqual({ 'content-type': 'application/json', 'x-token': 'abc' });
    } finally {
      await small.close();
    }
  });

  it('keeps a bounded number of sandboxes', async () => {
    const small = createTransformRunner({ timeoutMs: 100, memoryBytes: 16 * 1024 * 1024 }, { maxCachedSandboxes: 3 });
    try {
      for (let i = 0; i < 5; i++) succeeded(await small.run(`// ${i}\n${SMALL}`, request(), context));
      expect(small.cachedSandboxes).toBe(3);
      failed(await small.run(handler('while (true) {}'), request(), context));
      expect(small.cachedSandboxes).toBe(2); // the one that timed out was cached, then thrown away
    } finally {
      await small.close();
    }
  });
});
