/**
 * The REST client's HTTP edge against a scripted local server: what it sends, and how
 * each kind of failure surfaces. Its behaviour against the real relay is covered in
 * test/e2e/client-rest.test.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHookClient, fillPage, HookApiError, HookNetworkError, paginate, type HookClient } from '../src/index.ts';
import { closedPort } from '@hook/test/receiver';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let server: Server;
let baseUrl = '';
let seen: Seen[] = [];
let answer: (request: Seen, response: ServerResponse) => void = (_request, response) => response.end();
const clients: HookClient[] = [];

function client(options: Partial<Parameters<typeof createHookClient>[0]> = {}): HookClient {
  const made = createHookClient({ apiUrl: baseUrl, apiKey: 'hk_test', ...options });
  clients.push(made);
  return made;
}

function json(response: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  response.writeHead(status, { 'content-type': type, 'x-request-id': 'req_header' });
  response.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received = { method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks) };
      seen.push(received);
      answer(received, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  seen = [];
  await Promise.all(clients.splice(0).map((made) => made.close()));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});


describe('requests', () => {
  it('sends the key, JSON bodies and only the query parameters given, under the base URL\'s path', async () => {
    answer = (_request, response) => json(response, 200, { data: [], next_cursor: null });
    const prefixed = client({ apiUrl: `${baseUrl}/relay/` });
    await prefixed.events.list({ status: 'failed', limit: 5, endpoint_id: undefined });
    answer = (_request, response) => json(response, 201, { id: 'ep_1' });
    await prefixed.endpoints.create({ name: 'orders', destination: { type: 'cli' } });

    expect(seen[0]).toMatchObject({ method: 'GET', url: '/relay/v1/events?status=failed&limit=5' });
    expect(seen[0]!.headers.authorization).toBe('Bearer hk_test');
    expect(seen[1]).toMatchObject({ method: 'POST', url: '/relay/v1/endpoints' });
    expect(seen[1]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[1]!.body.toString())).toEqual({ name: 'orders', destination: { type: 'cli' } });
  });

  it('sends no key to POST /v1/accounts', async () => {
    answer = (_request, response) => json(response, 201, { account: { id: 'acct_1' }, api_key: 'hk_new' });
    await client().accounts.create();
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('escapes ids in paths', async () => {
    answer = (_request, response) => json(response, 200, {});
    await client().endpoints.get('ep_1/../../v1/accounts');
    expect(seen[0]!.url).toBe('/v1/endpoints/ep_1%2F..%2F..%2Fv1%2Faccounts');
  });

  it('sends destination calls and a replay\'s destination_id to their routes', async () => {
    answer = (_request, response) => json(response, 200, {});
    const hook = client();
    await hook.destinations.list('ep_1');
    await hook.destinations.create('ep_1', { destination: { type: 'url', url: 'https://example.com/hooks' }, rate_per_second: 5 });
    await hook.destinations.update('dst_1', { status: 'paused', max_in_flight: null });
    await hook.destinations.rotateSecret('dst_1');
    await hook.events.replay('evt_1', { destination_id: 'dst_1' });
    await hook.events.replay('evt_2');
    expect(seen.map((request) => `${request.method} ${request.url} ${request.body.toString()}`)).toEqual([
      'GET /v1/endpoints/ep_1/destinations ',
      'POST /v1/endpoints/ep_1/destinations {"destination":{"type":"url","url":"https://example.com/hooks"},"rate_per_second":5}',
      'PATCH /v1/destinations/dst_1 {"status":"paused","max_in_flight":null}',
      'POST /v1/destinations/dst_1/rotate-secret {}',
      'POST /v1/events/replay/evt_1 {"destination_id":"dst_1"}',
      'POST /v1/events/replay/evt_2 {}',
    ]);
  });

  it('sends issue calls to their routes, with only the filters given', async () => {
    answer = (_request, response) => json(response, 200, {});
    const hook = client();
    await hook.issues.list({ status: 'open,resolved', destination_id: 'dst_1', kind: 'timeout', limit: 5 });
    await hook.issues.get('iss_1');
    await hook.issues.events('iss_1', { cursor: 'c1' });
    await hook.issues.acknowledge('iss_1');
    await hook.issues.resolve('iss_1');
    await hook.issues.retry('iss_1');
    expect(seen.map((request) => `${request.method} ${request.url} ${request.body.toString()}`)).toEqual([
      'GET /v1/issues?status=open%2Cresolved&destination_id=dst_1&kind=timeout&limit=5 ',
      'GET /v1/issues/iss_1 ',
      'GET /v1/issues/iss_1/events?cursor=c1 ',
      'POST /v1/issues/iss_1/acknowledge {}',
      'POST /v1/issues/iss_1/resolve {}',
      'POST /v1/issues/iss_1/retry {}',
    ]);
  });

  it('resolves a 204 to undefined', async () => {
    answer = (_request, response) => response.writeHead(204).end();
    await expect(client().endpoints.delete('ep_1')).resolves.toBeUndefined();
  });

  it('sends an ingest body byte for byte, with only the headers given', async () => {
    answer = (_request, response) => json(response, 200, { id: 'evt_1', status: 'pending' });
    const body = Buffer.from([0x7b, 0x20, 0x22, 0xff, 0x00, 0x0a]);
    const accepted = await client().ingest.send(`${baseUrl}/v1/ingest/abc/extra?x=1`, { method: 'PUT', body, headers: { 'x-event-type': 'raw' } });
    expect(accepted).toEqual({ id: 'evt_1', status: 'pending' });
    expect(seen[0]).toMatchObject({ method: 'PUT', url: '/v1/ingest/abc/extra?x=1' });
    expect(seen[0]!.body.equals(body)).toBe(true);
    expect(seen[0]!.headers['x-event-type']).toBe('raw');
    expect(seen[0]!.headers['content-type']).toBeUndefined();
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('takes an ingest answer\'s event from X-Hook-Event-Id and X-Hook-Event-Status, whatever the body; without them, from the default JSON or not at all', async () => {
    answer = (_request, response) => response.writeHead(202, { 'content-type': 'text/xml', 'x-hook-event-id': 'evt_9', 'x-hook-event-status': 'handshake' }).end('<Response/>');
    await expect(client().ingest.send(`${baseUrl}/v1/ingest/abc`, { body: '{}' })).resolves.toEqual({ id: 'evt_9', status: 'handshake' });
    answer = (_request, response) => json(response, 200, { id: 'evt_2', status: 'duplicate', extra: true });
    await expect(client().ingest.send(`${baseUrl}/v1/ingest/abc`, { body: '{}' })).resolves.toEqual({ id: 'evt_2', status: 'duplicate' });
    // No headers and nothing to read an id from (a custom 204 from a relay without them): an error, never an undefined id.
    answer = (_request, response) => response.writeHead(204).end();
    const error = (await client().ingest.send(`${baseUrl}/v1/ingest/abc`, { body: '{}' }).catch((caught: unknown) => caught)) as HookApiError;
    expect(error).toBeInstanceOf(HookApiError);
    expect(error.code).toBe('unexpected_response');
    expect(error.message).toContain('no event id');
  });

  it('refuses an API URL that is not http(s)', () => {
    expect(() => createHookClient({ apiUrl: 'ftp://example.com' })).toThrow(/http:\/\/ or https:\/\//);
    expect(() => createHookClient({ apiUrl: '127.0.0.1:8080' })).toThrow(TypeError);
  });
});

describe('errors', () => {
  it('carries the whole problem document of an error answer', async () => {
    const problem = {
      type: 'urn:hook:error:validation_failed', title: 'Invalid request', status: 400, detail: 'The request has 1 invalid field(s): body.name must not be empty',
      code: 'validation_failed', fix: 'Correct the fields listed in errors[]', errors: [{ field: 'body.name', message: 'must not be empty' }], request_id: 'req_body',
    };
    answer = (_request, response) => json(response, 400, problem, 'application/problem+json');
    const error = await client().endpoints.create({ name: '' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HookApiError);
    const apiError = error as HookApiError;
    expect(apiError.problem).toEqual(problem);
    expect([apiError.status, apiError.code, apiError.fix, apiError.requestId]).toEqual([400, 'validation_failed', problem.fix, 'req_body']);
    expect(apiError.errors).toEqual(problem.errors);
    expect(apiError.message).toBe('Invalid request: The request has 1 invalid field(s): body.name must not be empty');
  });

  it('turns an error answer that is not problem+json into unexpected_response, with the status and an excerpt', async () => {
    answer = (_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html><body>Bad gateway from the proxy</body></html>');
    };
    const error = (await client().account.get().catch((caught: unknown) => caught)) as HookApiError;
    expect(error).toBeInstanceOf(HookApiError);
    expect(error.status).toBe(502);
    expect(error.code).toBe('unexpected_response');
    expect(error.detail).toContain(`GET ${baseUrl}/v1/account answered 502 (text/html)`);
    expect(error.detail).toContain('Bad gateway from the proxy');
  });

  it('treats a success answer that is not JSON as unexpected', async () => {
    answer = (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    const error = (await client().account.get().catch((caught: unknown) => caught)) as HookApiError;
    expect(error).toBeInstanceOf(HookApiError);
    expect(error.code).toBe('unexpected_response');
  });

  it('reports a closed port as a network error naming the URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const error = (await client({ apiUrl: url }).account.get().catch((caught: unknown) => caught)) as HookNetworkError;
    expect(error).toBeInstanceOf(HookNetworkError);
    expect(error).not.toBeInstanceOf(HookApiError);
    expect(error.failure).toBe('refused');
    expect(error.url).toBe(url);
    expect(error.message).toBe(`Cannot reach ${url} (connection refused: nothing is listening there)`);
  });

  it('gives up on a relay that does not answer within the response timeout', async () => {
    answer = () => {}; // never answers
    const started = Date.now();
    const error = (await client({ responseTimeoutMs: 300 }).account.get().catch((caught: unknown) => caught)) as HookNetworkError;
    expect(error).toBeInstanceOf(HookNetworkError);
    expect(error.failure).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('paginate', () => {
  it('follows next_cursor until the last page', async () => {
    const pages: Record<string, { data: number[]; next_cursor: string | null }> = {
      start: { data: [1, 2], next_cursor: 'b' },
      b: { data: [3], next_cursor: 'c' },
      c: { data: [], next_cursor: null },
    };
    const cursors: Array<string | undefined> = [];
    const items: number[] = [];
    for await (const item of paginate(async (cursor) => (cursors.push(cursor), pages[cursor ?? 'start']!))) items.push(item);
    expect(items).toEqual([1, 2, 3]);
    expect(cursors).toEqual([undefined, 'b', 'c']);
  });
});

describe('fillPage', () => {
  // A filtered list as GET /v1/events answers it: pages stopped at their bound hold few events, or none.
  const pages: Record<string, { data: number[]; next_cursor: string | null }> = {
    start: { data: [], next_cursor: 'b' },
    b: { data: [1], next_cursor: 'c' },
    c: { data: [], next_cursor: 'd' },
    d: { data: [2, 3], next_cursor: 'e' },
    e: { data: [4], next_cursor: null },
  };

  it('follows next_cursor past short and empty pages, asking for what is missing, until the page is full or the list ends', async () => {
    const asked: Array<[string | undefined, number]> = [];
    const fetchPage = async (cursor: string | undefined, limit: number) => {
      asked.push([cursor, limit]);
      const page = pages[cursor ?? 'start']!;
      return { data: page.data.slice(0, limit), next_cursor: page.next_cursor };
    };
    expect(await fillPage(fetchPage, 3, undefined)).toEqual({ data: [1, 2, 3], next_cursor: 'e' });
    expect(asked).toEqual([[undefined, 3], ['b', 3], ['c', 2], ['d', 2]]);
    expect(await fillPage(fetchPage, 3, 'e')).toEqual({ data: [4], next_cursor: null });
  });

  it('answers with what it has, and the cursor on, once its time is up', async () => {
    let clock = 0;
    const fetchPage = async (cursor: string | undefined) => {
      clock += 400;
      return pages[cursor ?? 'start']!;
    };
    expect(await fillPage(fetchPage, 3, undefined, { budgetMs: 1000, now: () => clock })).toEqual({ data: [1], next_cursor: 'd' });
  });
});
