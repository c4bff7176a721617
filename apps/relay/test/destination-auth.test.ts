/**
 * Destination auth (issue 31): the sender signs in to a receiver with Basic, Bearer,
 * static headers or an OAuth2 client-credentials token, against real local servers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DestinationAuth } from '@hook/core';
import { DeliverySender } from '../src/delivery/sender.ts';

interface Seen {
  headers: IncomingMessage['headers'];
  body: string;
}

interface LocalServer {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

type Answer = { status: number; json?: unknown; text?: string } | 'hold';

/** A node:http server on a free port that answers each request with `answer` (`hold`: never answers). */
async function startServer(answer: (request: Seen, index: number) => Answer): Promise<LocalServer> {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(received);
      const answered = answer(received, seen.length - 1);
      if (answered === 'hold') return;
      response.writeHead(answered.status, { 'content-type': answered.text === undefined ? 'application/json' : 'text/plain' });
      response.end(answered.text ?? (answered.json === undefined ? '' : JSON.stringify(answered.json)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const BODY = Buffer.from('{"type":"invoice.paid"}');
/** The headers a delivery carries: one forwarded from the original request, and the relay's own. */
const DELIVERY_HEADERS = {
  'content-type': 'application/json',
  authorization: 'Bearer from-the-original-sender',
  'x-api-key': 'forwarded',
  'webhook-id': 'evt_1',
  'webhook-timestamp': '1700000000',
  'webhook-signature': 'v1,real',
  'x-hook-attempt': '1',
};

const opened: LocalServer[] = [];
async function server(answer: (request: Seen, index: number) => Answer): Promise<LocalServer> {
  const started = await startServer(answer);
  opened.push(started);
  return started;
}

let sender: DeliverySender;
beforeAll(() => {
  sender = new DeliverySender({ timeoutMs: 2000, allowPrivateDestinations: true });
});
afterAll(async () => {
  await sender.close();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((started) => started.close()));
});

let destinations = 0;
/** A destination id of its own per use, so tokens cached for one test never serve another. */
function send(url: string, auth: DestinationAuth | null, destinationId = `dst_${++destinations}`) {
  return sender.send(url, DELIVERY_HEADERS, BODY, { destinationId, auth, tls: null });
}

describe('basic, bearer and static headers', () => {
  it('basic: the receiver gets Basic base64(username:password) in place of a forwarded authorization, and 401 is recorded without it', async () => {
    const expected = `Basic ${Buffer.from('hook user:pä:ss', 'utf8').toString('base64')}`;
    const receiver = await server((request) => ({ status: request.headers.authorization === expected ? 200 : 401 }));

    expect(await send(receiver.url, { type: 'basic', username: 'hook user', password: 'pä:ss' })).toMatchObject({ status: 200, error: null });
    expect(await send(receiver.url, { type: 'basic', username: 'hook user', password: 'wrong' })).toMatchObject({ status: 401, error: null });
    expect(await sender.send(receiver.url, DELIVERY_HEADERS, BODY)).toMatchObject({ status: 401, error: null });
    expect(receiver.seen.map((request) => request.headers.authorization)).toEqual([expected, `Basic ${Buffer.from('hook user:wrong').toString('base64')}`, 'Bearer from-the-original-sender']);
  });

  it('bearer: the receiver gets Bearer <token>, and 401 is recorded without it', async () => {
    const receiver = await server((request) => ({ status: request.headers.authorization === 'Bearer tok_123' ? 200 : 401 }));

    expect(await send(receiver.url, { type: 'bearer', token: 'tok_123' })).toMatchObject({ status: 200, error: null });
    expect(await send(receiver.url, null)).toMatchObject({ status: 401, error: null });
  });

  it('static headers replace forwarded ones of the same name in any case, but never the signature or x-hook-* headers', async () => {
    const receiver = await server((request) => ({ status: request.headers['x-api-key'] === 'k_live' ? 200 : 401 }));
    const auth: DestinationAuth = { type: 'headers', headers: { 'X-Api-Key': 'k_live', 'X-Tenant': 'acme', 'Webhook-Signature': 'v1,forged', 'x-hook-attempt': '99' } };

    expect(await send(receiver.url, auth)).toMatchObject({ status: 200, error: null });
    expect(await send(receiver.url, null)).toMatchObject({ status: 401, error: null });
    const [withHeaders] = receiver.seen;
    expect(withHeaders!.headers).toMatchObject({ 'x-api-key': 'k_live', 'x-tenant': 'acme', 'webhook-signature': 'v1,real', 'x-hook-attempt': '1', 'webhook-id': 'evt_1' });
    expect(withHeaders!.body).toBe(BODY.toString());
  });
});

/** A token endpoint that hands out tok_1, tok_2, … for client `hook`/`s3cret` sent with Basic, lasting `expiresIn` seconds. */
async function tokenServer(options: { expiresIn?: number; fail?: Answer } = {}): Promise<LocalServer & { issued: string[] }> {
  const issued: string[] = [];
  const started = await server((request) => {
    if (options.fail) return options.fail;
    if (request.headers.authorization !== `Basic ${Buffer.from('hook:s3cret').toString('base64')}`) return { status: 401, json: { error: 'invalid_client' } };
    const token = `tok_${issued.length + 1}`;
    issued.push(token);
    return { status: 200, json: { access_token: token, token_type: 'Bearer', expires_in: options.expiresIn ?? 3600 } };
  });
  return Object.assign(started, { url: started.url.replace('/hook', '/oauth/token'), issued });
}

function oauth2(tokenUrl: string, settings: Partial<Extract<DestinationAuth, { type: 'oauth2' }>> = {}): DestinationAuth {
  return { type: 'oauth2', token_url: tokenUrl, client_id: 'hook', client_secret: 's3cret', scope: null, audience: null, ...settings };
}

/** A receiver that takes the tokens in `accepted` (revoked ones are dropped from it) and answers 401 to others. */
async function tokenReceiver(accepted: (token: string, index: number) => boolean): Promise<LocalServer> {
  return server((request, index) => ({ status: accepted(request.headers.authorization?.replace(/^Bearer /, '') ?? '', index) ? 200 : 401 }));
}

describe('oauth2 client credentials', () => {
  it('asks for a token once (Basic client auth, grant_type, scope, audience) and reuses it across sends', async () => {
    const tokens = await tokenServer();
    const receiver = await tokenReceiver((token) => tokens.issued.includes(token));
    const auth = oauth2(tokens.url, { scope: 'webhooks:write events:read', audience: 'https://api.example.com' });

    for (let i = 0; i < 10; i++) expect(await send(receiver.url, auth, 'dst_reuse')).toMatchObject({ status: 200, error: null });

    expect(tokens.seen).toHaveLength(1);
    expect(tokens.seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(tokens.seen[0]!.body))).toEqual({ grant_type: 'client_credentials', scope: 'webhooks:write events:read', audience: 'https://api.example.com' });
    expect(receiver.seen.map((request) => request.headers.authorization)).toEqual(Array(10).fill('Bearer tok_1'));
  });

  it('concurrent sends for one destination share one token request', async () => {
    const tokens = await tokenServer();
    const receiver = await tokenReceiver((token) => token === 'tok_1');

    const results = await Promise.all(Array.from({ length: 20 }, () => send(receiver.url, oauth2(tokens.url), 'dst_concurrent')));

    expect(results.map((result) => result.status)).toEqual(Array(20).fill(200));
    expect(tokens.seen).toHaveLength(1);
  });

  it('asks for a new token once the last one is about to expire', async () => {
    const tokens = await tokenServer({ expiresIn: 1 });
    const receiver = await tokenReceiver((token) => tokens.issued.includes(token));

    expect(await send(receiver.url, oauth2(tokens.url), 'dst_expiry')).toMatchObject({ status: 200 });
    expect(tokens.seen).toHaveLength(1);
    await expect.poll(async () => {
      expect(await send(receiver.url, oauth2(tokens.url), 'dst_expiry')).toMatchObject({ status: 200 });
      return tokens.seen.length;
    }, { timeout: 3000, interval: 50 }).toBe(2);
    expect(receiver.seen.at(-1)!.headers.authorization).toBe('Bearer tok_2');
  });

  it('a changed setting gets a new token', async () => {
    const tokens = await tokenServer();
    const receiver = await tokenReceiver(() => true);

    await send(receiver.url, oauth2(tokens.url, { scope: 'a' }), 'dst_changed');
    await send(receiver.url, oauth2(tokens.url, { scope: 'b' }), 'dst_changed');

    expect(tokens.seen.map((request) => new URLSearchParams(request.body).get('scope'))).toEqual(['a', 'b']);
  });

  it("a receiver's 401 gets exactly one new token and one more try", async () => {
    const tokens = await tokenServer();
    // The receiver has revoked tok_1 (it answers 401 to it) and takes tok_2.
    const receiver = await tokenReceiver((token) => token === 'tok_2');

    expect(await send(receiver.url, oauth2(tokens.url), 'dst_revoked')).toMatchObject({ status: 200, error: null });
    expect(tokens.seen).toHaveLength(2);
    expect(receiver.seen.map((request) => request.headers.authorization)).toEqual(['Bearer tok_1', 'Bearer tok_2']);

    // A receiver that refuses every token: one new token, one more try, and its 401 is the answer.
    const refusing = await tokenReceiver(() => false);
    expect(await send(refusing.url, oauth2(tokens.url), 'dst_revoked')).toMatchObject({ status: 401 });
    expect(tokens.seen).toHaveLength(3);
    expect(refusing.seen.map((request) => request.headers.authorization)).toEqual(['Bearer tok_2', 'Bearer tok_3']);
  });

  it('a token endpoint that refuses the client gives the attempt a clear error, and nothing is sent to the receiver', async () => {
    const tokens = await tokenServer({ fail: { status: 400, json: { error: 'invalid_client', error_description: 'client authentication failed' } } });
    const receiver = await tokenReceiver(() => true);

    const result = await send(receiver.url, oauth2(tokens.url));

    expect(result).toMatchObject({ status: null, body: null, error: `oauth2 token request to ${tokens.url} failed: 400 invalid_client: client authentication failed` });
    expect(receiver.seen).toHaveLength(0);
    // Asked with Basic, then once more with the credentials in the body.
    expect(tokens.seen.map((request) => [request.headers.authorization ?? null, new URLSearchParams(request.body).get('client_secret')])).toEqual([
      [`Basic ${Buffer.from('hook:s3cret').toString('base64')}`, null],
      [null, 's3cret'],
    ]);
  });

  it('a token endpoint that fails (500, a body that is not a token, no answer) gives a clear error', async () => {
    const down = await tokenServer({ fail: { status: 500, text: 'upstream down' } });
    const receiver = await tokenReceiver(() => true);
    expect((await send(receiver.url, oauth2(down.url))).error).toBe(`oauth2 token request to ${down.url} failed: 500 "upstream down"`);

    const noToken = await tokenServer({ fail: { status: 200, json: { token_type: 'Bearer' } } });
    expect((await send(receiver.url, oauth2(noToken.url))).error).toBe(`oauth2 token request to ${noToken.url} failed: 200, but the answer has no access_token`);

    const silent = await tokenServer({ fail: 'hold' });
    const quick = new DeliverySender({ timeoutMs: 300, allowPrivateDestinations: true });
    try {
      const result = await quick.send(receiver.url, DELIVERY_HEADERS, BODY, { destinationId: 'dst_silent', auth: oauth2(silent.url), tls: null });
      expect(result.error).toMatch(new RegExp(`^oauth2 token request to ${silent.url} failed: no answer within 300 ms`));
      expect(result.durationMs).toBeLessThan(1000);
    } finally {
      await quick.close();
    }
    expect(receiver.seen).toHaveLength(0);
  });

  it('a server that wants the client credentials in the body gets them there', async () => {
    let issued = 0;
    const tokens = await server((request) => {
      const form = new URLSearchParams(request.body);
      if (request.headers.authorization !== undefined || form.get('client_id') !== 'hook' || form.get('client_secret') !== 's3cret') return { status: 401, json: { error: 'invalid_client' } };
      return { status: 200, json: { access_token: `tok_${++issued}`, token_type: 'bearer', expires_in: '1' } };
    });
    const receiver = await tokenReceiver(() => true);

    expect(await send(receiver.url, oauth2(tokens.url), 'dst_body')).toMatchObject({ status: 200, error: null });
    expect(tokens.seen).toHaveLength(2);
    // Its next token request goes to the body at once.
    await expect.poll(async () => {
      await send(receiver.url, oauth2(tokens.url), 'dst_body');
      return issued;
    }, { timeout: 3000, interval: 50 }).toBe(2);
    expect(tokens.seen).toHaveLength(3);
  });

  it('the token endpoint is held to the private-address rule', async () => {
    const tokens = await tokenServer();
    const hosted = new DeliverySender({ timeoutMs: 2000, allowPrivateDestinations: false });
    try {
      const result = await hosted.send('https://example.com/hook', DELIVERY_HEADERS, BODY, { destinationId: 'dst_private', auth: oauth2(tokens.url), tls: null });
      expect(result.error).toBe(`oauth2 token request to ${tokens.url} failed: destination 127.0.0.1 resolves to 127.0.0.1, a private, loopback or link-local address; the relay operator can allow these with HOOK_ALLOW_PRIVATE_DESTINATIONS=true`);
    } finally {
      await hosted.close();
    }
    expect(tokens.seen).toHaveLength(0);
  });
});
