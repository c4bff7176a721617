/**
 * Operations surfaces (docs/deployment.md#operations): /healthz is liveness only, /readyz
 * checks the database and its migrations, /metrics counts what the relay does.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { MIGRATIONS_TABLE, QUEUE_STATUS_SQL } from '@hook/db';
import { maskSecrets } from '../src/logging.ts';
import { setDatabaseReachable } from '@hook/test/database';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, createEndpoint, expectProblem, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let receiver: Receiver;
let key: string;
beforeAll(async () => {
  relay = await startTestRelay({}, { workerPollMs: 50 });
  receiver = await startReceiver();
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => {
  await relay.close();
  await receiver.close();
});

/** The samples of a Prometheus text exposition, as `name{labels}` → value; each line checked for the format's shape. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/i.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

async function scrape(baseUrl = relay.baseUrl): Promise<Map<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

/** `read()`'s value once `done` takes it. */
function eventually<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeout = 10_000): Promise<T> {
  return vi.waitFor(async () => {
    const value = await read();
    expect(done(value), `${what}: still ${JSON.stringify(value instanceof Map ? Object.fromEntries(value) : value)}`).toBe(true);
    return value;
  }, { timeout, interval: 50 });
}

describe('/healthz and /readyz', () => {
  it('answers ready while the database answers and has every migration', async () => {
    const ready = await api(relay.baseUrl, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok' });
    expect((await api(relay.baseUrl, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
  });

  it('is not ready while the database is cut off, stays live, and is ready again when it is back', async () => {
    await setDatabaseReachable(relay.database.name, false);
    try {
      const problem = expectProblem(await api(relay.baseUrl, 'GET', '/readyz'), 503, 'storage_unavailable');
      expect(problem.errors).toEqual([{ field: 'database', message: expect.stringMatching(/^unreachable/) }]);
      expect(problem.detail).toMatch(/^Not ready: database unreachable/);
      // The database's own error (which names it) stays in the log.
      expect(JSON.stringify(problem)).not.toContain(relay.database.name);
      expect((await api(relay.baseUrl, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await setDatabaseReachable(relay.database.name, true);
    }
    expect((await api(relay.baseUrl, 'GET', '/readyz')).status).toBe(200);
  });

  it('is not ready while a migration is missing from the database, and names it', async () => {
    const [latest] = await sqlRows(relay, `select * from ${MIGRATIONS_TABLE} order by id desc limit 1`);
    await sqlRows(relay, `delete from ${MIGRATIONS_TABLE} where id = ?`, [latest.id]);
    try {
      const problem = expectProblem(await api(relay.baseUrl, 'GET', '/readyz'), 503, 'storage_unavailable');
      expect(problem.errors).toEqual([{ field: 'migrations', message: expect.stringContaining(`not applied: ${latest.name}`) }]);
    } finally {
      await sqlRows(relay, `insert into ${MIGRATIONS_TABLE} (id, name, executed_at) values (?, ?, ?)`, [latest.id, latest.name, latest.executed_at]);
    }
    expect((await api(relay.baseUrl, 'GET', '/readyz')).status).toBe(200);
  });
});

describe('/metrics', () => {
  it('serves the Prometheus text format with the process metrics under hook_', async () => {
    const samples = await scrape();
    expect(samples.get('hook_process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(samples.has('hook_nodejs_eventloop_lag_seconds')).toBe(true);
    for (const name of ['hook_queue_depth', 'hook_queue_lag_seconds', 'hook_stream_connections{mode="tail"}', 'hook_ingest_requests_total{outcome="accepted"}', 'hook_delivery_attempts_total{outcome="delivered"}']) {
      expect(samples.has(name), name).toBe(true);
    }
  });

  it('counts ingest requests by outcome, with their latency', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'counted' }); // events wait for hook listen
    const before = await scrape();
    for (let i = 0; i < 5; i++) await sendEvent(endpoint.url, `{"n":${i}}`);
    expect((await fetch(`${relay.baseUrl}/v1/ingest/nosuchingestid`, { method: 'POST', body: 'x' })).status).toBe(404);
    const after = await scrape();
    const accepted = 'hook_ingest_requests_total{outcome="accepted"}';
    expect(after.get(accepted)! - before.get(accepted)!).toBe(5);
    expect(after.get('hook_ingest_requests_total{outcome="not_found"}')! - before.get('hook_ingest_requests_total{outcome="not_found"}')!).toBe(1);
    expect(after.get('hook_ingest_duration_seconds_count{outcome="accepted"}')! - (before.get('hook_ingest_duration_seconds_count{outcome="accepted"}') ?? 0)).toBe(5);
  });

  it('counts a delivery to a real receiver as delivered, with its duration', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'delivered', destination: { type: 'url', url: receiver.url } });
    const before = await scrape();
    const delivered = 'hook_delivery_attempts_total{outcome="delivered"}';
    await sendEvent(endpoint.url, '{"type":"order.paid"}');
    await receiver.waitFor(1);
    const after = await eventually('delivered count', scrape, (samples) => samples.get(delivered)! > before.get(delivered)!);
    expect(after.get(delivered)! - before.get(delivered)!).toBe(1);
    expect(after.get('hook_delivery_duration_seconds_count{outcome="delivered"}')).toBeGreaterThanOrEqual(1);
    receiver.respond = () => ({ status: 500 });
    await sendEvent(endpoint.url, '{"type":"order.failed"}');
    const failed = 'hook_delivery_attempts_total{outcome="failed_status"}';
    await eventually('failed_status count', scrape, (samples) => samples.get(failed)! > after.get(failed)!);
    receiver.respond = () => ({ status: 200 });
  });

  it("exports the event loop's delay (monitorEventLoopDelay) and the transformation threads' work", async () => {
    const samples = await scrape();
    // prom-client's default metrics read perf_hooks.monitorEventLoopDelay (reset at each scrape, so a quiet interval reads 0).
    for (const name of ['hook_nodejs_eventloop_lag_p50_seconds', 'hook_nodejs_eventloop_lag_p99_seconds', 'hook_nodejs_eventloop_lag_max_seconds']) {
      expect(samples.get(name), name).toBeGreaterThanOrEqual(0);
    }
    expect(samples.get('hook_transformation_tasks{state="queued"}')).toBe(0);
    const endpoint = await createEndpoint(relay.baseUrl, key, {
      name: 'transformed', destination: { type: 'url', url: receiver.url },
      // 5 ms of CPU at least: usage counts whole milliseconds.
      transformation: { code: "addHandler('transform', (request) => { const end = Date.now() + 5; while (Date.now() < end) {} request.headers['x-seen'] = '1'; return request; });" },
    });
    const before = samples.get('hook_transformation_cpu_seconds_total')!;
    const arrived = receiver.requests.length;
    await sendEvent(endpoint.url, '{"type":"order.paid"}');
    await receiver.waitFor(arrived + 1);
    await eventually('transformation CPU counted', scrape, (after) => after.get('hook_transformation_cpu_seconds_total')! > before);
    // The account's usage counts it too, once the meter has flushed (every 5 s).
    await eventually('usage.transformation_cpu_ms', async () => (await api(relay.baseUrl, 'GET', '/v1/account', { key })).body.usage.transformation_cpu_ms, (cpuMs: number) => cpuMs > 0, 15_000);
  });

  it('shows a paused endpoint\'s backlog as queue depth and lag', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'paused', destination: { type: 'url', url: receiver.url } });
    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'paused' } });
    // The retrying event of the test above waits too (its retry is 30 s away, so not yet due).
    const before = await eventually('an empty queue', scrape, (samples) => samples.get('hook_queue_depth') === 0);
    expect(before.get('hook_queue_lag_seconds')).toBe(0);
    for (let i = 0; i < 3; i++) await sendEvent(endpoint.url, `{"held":${i}}`);
    const held = await eventually('queue depth 3', scrape, (samples) => samples.get('hook_queue_depth') === 3);
    expect(held.get('hook_queue_lag_seconds')).toBeGreaterThan(0);
    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'active' } });
    await eventually('the backlog delivered', scrape, (samples) => samples.get('hook_queue_depth') === 0);
  });

  it('reads the queue with delivery_due_idx, not a scan of the deliveries table', async () => {
    const em = relay.orm.em.fork();
    const plan = await em.transactional(async (tx) => {
      // On a table this small a sequential scan is cheapest; what matters is that the index serves the query.
      await tx.getConnection().execute('set local enable_seqscan = off', [], 'all', tx.getTransactionContext());
      return tx.getConnection().execute(`explain (format json) ${QUEUE_STATUS_SQL}`, [], 'all', tx.getTransactionContext());
    });
    const text = JSON.stringify(plan);
    expect(text).toContain('delivery_due_idx');
    expect(text).not.toContain('Seq Scan');
  });

  it('counts live WebSocket connections by mode', async () => {
    const tail = 'hook_stream_connections{mode="tail"}';
    expect((await scrape()).get(tail)).toBe(0);
    const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream`, { headers: { authorization: `Bearer ${key}` } });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    expect((await scrape()).get(tail)).toBe(1);
    socket.close();
    await eventually('tail connections back to 0', scrape, (samples) => samples.get(tail) === 0);
  });

  it('is not served with HOOK_METRICS=off', async () => {
    const quiet = await startTestRelay({ metrics: false });
    try {
      expectProblem(await api(quiet.baseUrl, 'GET', '/metrics'), 404, 'route_not_found');
      expect((await api(quiet.baseUrl, 'GET', '/readyz')).status).toBe(200);
    } finally {
      await quiet.close();
    }
  });
});

describe('/metrics with HOOK_METRICS_TOKEN', () => {
  it('answers only the bearer of the token', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const guarded = await startTestRelay({ metricsToken: token });
    try {
      expectProblem(await api(guarded.baseUrl, 'GET', '/metrics'), 401, 'metrics_token_required');
      for (const authorization of [`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token]) {
        const refused = await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization } });
        expect(refused.status).toBe(401);
        await refused.arrayBuffer();
      }
      const allowed = await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain('hook_ingest_requests_total');
    } finally {
      await guarded.close();
    }
  });
});

describe('the log filter', () => {
  it('masks keys, secrets, tokens and credentials in any line, keeping what kind they were', () => {
    const line = '{"msg":"insert into api_key values (\'hk_AbC123dEf456gHi789\')","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+x/y=","t":"pgt_x-Y_z0123456789","h":"Bearer hk_zzzzzzzz","b":"Basic dXNlcjpwYXNz"}';
    const masked = maskSecrets(line);
    expect(masked).toBe('{"msg":"insert into api_key values (\'hk_[redacted]\')","secret":"whsec_[redacted]","t":"pgt_[redacted]","h":"Bearer [redacted]","b":"Basic [redacted]"}');
    expect(maskSecrets('{"msg":"request answered","route":"/v1/endpoints/:id"}')).toBe('{"msg":"request answered","route":"/v1/endpoints/:id"}');
  });
});
