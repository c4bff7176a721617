import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createEndpoint, expectProblem, readJson, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let key: string;
beforeAll(async () => {
  relay = await startTestRelay();
  // One account for the whole file, with more endpoints than free allows.
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => relay.close());

describe('endpoints', () => {
  it('creates an endpoint whose url receives events at once', async () => {
    const response = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'orders' } });
    expect(response.status).toBe(201);
    const endpoint = response.body;
    expect(endpoint).toEqual({
      id: expect.stringMatching(/^ep_[0-9A-Z]{26}$/),
      name: 'orders',
      url: expect.stringMatching(new RegExp(`^${relay.baseUrl}/v1/ingest/[A-Za-z0-9_-]{32}$`)),
      status: 'active',
      destination: { type: 'cli' },
      transformation: null,
      filter: null,
      verification: null,
      response: null,
      handshake: null,
      dedupe: null,
      destinations: [{
        id: `dst_${endpoint.id.slice(3)}`,
        endpoint_id: endpoint.id,
        position: 0,
        destination: { type: 'cli' },
        status: 'active',
        disabled_reason: null,
        transformation: null,
        filter: null,
        rate_per_second: null,
        max_in_flight: null,
        auth: null,
        tls: null,
        signature_scheme: 'v1',
        public_key: null,
        ordering: null,
        delay_seconds: null,
        health: { consecutive_failures: 0, failing_since: null },
        created_at: endpoint.created_at,
        updated_at: endpoint.created_at,
      }],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: endpoint.created_at,
    });
    const ingest = await fetch(endpoint.url, { method: 'POST', body: 'hello' });
    expect(ingest.status).toBe(200);
  });

  it('uses HOOK_PUBLIC_URL for urls when it is set', async () => {
    const other = await startTestRelay({ publicUrl: 'https://hooks.example.com' });
    try {
      const { key: otherKey } = await signUp(other.baseUrl);
      const endpoint = await createEndpoint(other.baseUrl, otherKey);
      expect(endpoint.url).toMatch(/^https:\/\/hooks\.example\.com\/v1\/ingest\//);
    } finally {
      await other.close();
    }
  });

  it('takes a url destination and validates it', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'prod', destination: { type: 'url', url: 'https://example.com/hooks' } });
    expect(endpoint.destination).toEqual({ type: 'url', url: 'https://example.com/hooks' });

    const problem = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'x', destination: { type: 'url', url: 'ftp://example.com' } } }), 400, 'validation_failed');
    expect(problem.errors).toEqual([{ field: 'body.destination.url', message: 'must be an http:// or https:// URL' }]);
    const missing = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'x', destination: { type: 'url' } } }), 400, 'validation_failed');
    expect(missing.errors).toEqual([{ field: 'body.destination.url', message: 'is required' }]);
    const stray = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'x', destination: { type: 'cli', url: 'https://a.example' } } }), 400, 'validation_failed');
    expect(stray.errors[0].field).toBe('body.destination.url');
    const kind = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'x', destination: { type: 'email' } } }), 400, 'validation_failed');
    expect(kind.errors[0]).toEqual({ field: 'body.destination.type', message: 'must be one of: cli, url, amqp, nats, redis, mqtt' });
  });

  it('says when the name is missing or empty', async () => {
    const missing = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: {} }), 400, 'validation_failed');
    expect(missing.errors).toEqual([{ field: 'body.name', message: 'is required' }]);
    expect(missing.detail).toContain('body.name is required');
    const empty = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: '' } }), 400, 'validation_failed');
    expect(empty.errors).toEqual([{ field: 'body.name', message: 'must not be empty' }]);
    const blank = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: '   ' } }), 400, 'validation_failed');
    expect(blank.errors).toEqual([{ field: 'body.name', message: 'must not be only spaces' }]);
    const noBody = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key }), 400, 'validation_failed');
    expect(noBody.errors).toEqual([{ field: 'body.name', message: 'is required' }]);
  });

  it('pages newest first with keyset cursors', async () => {
    const { key: pagedKey } = await signUp(relay.baseUrl, { plan: 'pro' });
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createEndpoint(relay.baseUrl, pagedKey, { name: `e${i}` }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = await api(relay.baseUrl, 'GET', `/v1/endpoints?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: pagedKey });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((endpoint: { id: string }) => endpoint.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(created.map((endpoint) => endpoint.id).reverse());

    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints?cursor=bogus', { key: pagedKey }), 400, 'invalid_cursor');
    const tooMany = expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints?limit=101', { key: pagedKey }), 400, 'validation_failed');
    expect(tooMany.errors[0].field).toBe('query.limit');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints?limit=0', { key: pagedKey }), 400, 'validation_failed');
  });

  it('gets, patches, pauses, disables and deletes', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'lifecycle' });
    const got = await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key });
    expect(got.body).toEqual(endpoint);

    const patched = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { name: 'renamed', status: 'paused', destination: { type: 'url', url: 'http://localhost:9/x' } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'renamed', status: 'paused', destination: { type: 'url', url: 'http://localhost:9/x' }, url: endpoint.url });
    expect(patched.body.updated_at >= endpoint.updated_at).toBe(true);
    expect((await fetch(endpoint.url, { method: 'POST', body: 'paused still accepts' })).status).toBe(200);

    const badStatus = expectProblem(await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'off' } }), 400, 'validation_failed');
    expect(badStatus.errors[0]).toEqual({ field: 'body.status', message: 'must be one of: active, paused, disabled' });

    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'disabled' } });
    expect((await fetch(endpoint.url, { method: 'POST', body: 'x' })).status).toBe(410);

    expect((await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${endpoint.id}`, { key })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key }), 404, 'endpoint_not_found');
    expect((await fetch(endpoint.url, { method: 'POST', body: 'x' })).status).toBe(404);
    const listed = await api(relay.baseUrl, 'GET', '/v1/endpoints?limit=100', { key });
    expect(listed.body.data.map((e: { id: string }) => e.id)).not.toContain(endpoint.id);
  });

  it('keeps the events of a deleted endpoint in the history', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'to-delete' });
    const accepted = await readJson(await fetch(endpoint.url, { method: 'POST', body: 'keep me' }));
    await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${endpoint.id}`, { key });
    const event = await api(relay.baseUrl, 'GET', `/v1/events/${accepted.id}`, { key });
    expect(event.status).toBe(200);
    expect(event.body.body).toBe('keep me');
  });

  it('shows and rotates the signing secret, keeping the old one for the grace period', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const first = await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/secret`, { key });
    expect(first.body).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), previous_secret: null, previous_secret_expires_at: null, public_key: null, previous_public_key: null });
    const rotated = await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(first.body.secret);
    expect(rotated.body.previous_secret).toBe(first.body.secret);
    const expiresInHours = (Date.parse(rotated.body.previous_secret_expires_at) - Date.now()) / 3_600_000;
    expect(expiresInHours).toBeGreaterThan(23.9);
    expect(expiresInHours).toBeLessThanOrEqual(24);
    const again = await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/secret`, { key });
    expect(again.body).toEqual(rotated.body);
  });

  it('stores signing secrets encrypted (HOOK_SECRET_KEY), never as the whsec_ value the API shows', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const rotated = await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key });
    const [row] = await relay.orm.em.fork().getConnection().execute<{ secret: string; previous_secret: string }[]>('select secret, previous_secret from destination where endpoint_id = ?', [endpoint.id]);
    expect(row!.secret).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(row!.previous_secret).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    for (const shown of [rotated.body.secret, rotated.body.previous_secret]) {
      expect(JSON.stringify(row)).not.toContain(shown.slice('whsec_'.length));
    }
    const plaintext = await relay.orm.em.fork().getConnection().execute(`select id from destination where secret like 'whsec_%' or previous_secret like 'whsec_%'`);
    expect(plaintext).toEqual([]);
  });

  it('rejects bad ids and unknown fields on patch', async () => {
    const badId = expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints/123', { key }), 400, 'validation_failed');
    expect(badId.errors[0]).toEqual({ field: 'params.id', message: expect.stringMatching(/^must be an id like ep_/) });
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints/ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { key }), 404, 'endpoint_not_found');
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const unknown = expectProblem(await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { url: 'x' } }), 400, 'validation_failed');
    expect(unknown.errors[0].field).toBe('body.url');
  });
});

describe('tenant isolation', () => {
  it('answers 404 for every route that names another account\'s endpoint or event', async () => {
    const alice = await signUp(relay.baseUrl);
    const mallory = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, alice.key, { name: 'private' });
    const event = await readJson(await fetch(endpoint.url, { method: 'POST', body: 'secret payload' }));

    for (const [method, path, json] of [
      ['GET', `/v1/endpoints/${endpoint.id}`],
      ['PATCH', `/v1/endpoints/${endpoint.id}`, { name: 'stolen' }],
      ['DELETE', `/v1/endpoints/${endpoint.id}`],
      ['GET', `/v1/endpoints/${endpoint.id}/secret`],
      ['POST', `/v1/endpoints/${endpoint.id}/rotate-secret`],
      ['GET', `/v1/events?endpoint_id=${endpoint.id}`],
    ] as const) {
      expectProblem(await api(relay.baseUrl, method, path, { key: mallory.key, json }), 404, 'endpoint_not_found');
    }
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/events/${event.id}`, { key: mallory.key }), 404, 'event_not_found');
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key: mallory.key })).body.data).toEqual([]);
    expect((await api(relay.baseUrl, 'GET', '/v1/events', { key: mallory.key })).body.data).toEqual([]);
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key: alice.key })).body.name).toBe('private');
  });
});
