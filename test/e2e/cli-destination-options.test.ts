/**
 * `hook destinations add|update` with a destination's options (issue 31), and `hook
 * destinations blocked|unblock`, with the real binary against a real relay: broker
 * targets, each kind of auth (secrets from flags and from stdin), mTLS from PEM files,
 * the v1a signature, ordering and delay; what --json and the text view show, and that no
 * secret is ever printed; removing options on update; the usage errors, which say what
 * is wrong on stderr and print nothing on stdout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser, type HookRun } from '../support/cli.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
const user = new HookUser();
/** PEM files: a client certificate and its key, and a CA certificate. */
const pem = { cert: '', key: '', ca: '' };

beforeAll(async () => {
  // Queue destinations on 127.0.0.1 are private addresses; nothing is delivered in this file.
  relay = await startTestRelay({ allowPrivateDestinations: true });
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['endpoints', 'create', 'brokers']);
  await user.json(['endpoints', 'create', 'receivers', '--destination', 'https://example.com/first']);
  // The relay tests' certificate fixtures (apps/relay/test/fixtures/tls/README.md): the tests need no openssl.
  const fixtures = fileURLToPath(new URL('../../apps/relay/test/fixtures/tls/', import.meta.url));
  pem.cert = join(fixtures, 'client.crt');
  pem.key = join(fixtures, 'client.key');
  pem.ca = join(fixtures, 'ca.crt');
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

/** Runs with --json, expects exit 0 and that none of `secrets` is anywhere in stdout; returns stdout parsed. */
async function jsonWithout(args: readonly string[], secrets: readonly string[], input?: string): Promise<any> {
  const result = await user.run([...args, '--json'], input === undefined ? {} : { input });
  expect(result.code, result.stderr).toBe(0);
  for (const secret of secrets) expect(result.stdout).not.toContain(secret);
  return JSON.parse(result.stdout);
}

/** The lines of a PEM private key between its BEGIN and END lines: what must never be printed. */
function keyBody(path: string): string {
  return readFileSync(path, 'utf8').split('\n').filter((line) => line !== '' && !line.startsWith('-----')).join('\n');
}

function expectUsageError(result: HookRun, message: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
}

describe('hook destinations add with options', () => {
  it('publishes to each kind of broker, with the broker\'s password never shown', async () => {
    const password = 'broker-pa55word-f1d2';
    const amqp = await jsonWithout(['destinations', 'add', 'brokers', '--amqp', 'amqp://127.0.0.1:5672/orders', '--exchange', 'orders', '--routing-key', 'order.created', '--auth-basic', `hook:${password}`], [password]);
    expect(amqp).toMatchObject({
      destination: { type: 'amqp', url: 'amqp://127.0.0.1:5672/orders', exchange: 'orders', routing_key: 'order.created' },
      auth: { type: 'basic', username: 'hook', secret_set: true },
      tls: null, signature_scheme: 'v1', ordering: null, delay_seconds: null,
    });
    const nats = await jsonWithout(['destinations', 'add', 'brokers', '--nats', 'nats://127.0.0.1:4222', '--subject', 'orders.created'], []);
    expect(nats.destination).toEqual({ type: 'nats', url: 'nats://127.0.0.1:4222', subject: 'orders.created' });
    const redis = await jsonWithout(['destinations', 'add', 'brokers', '--redis', 'redis://127.0.0.1:6379/0', '--stream', 'orders', '--max-len', '1000'], []);
    expect(redis.destination).toEqual({ type: 'redis', url: 'redis://127.0.0.1:6379/0', stream: 'orders', max_len: 1000 });
    // The password from stdin, as the help advises (a flag shows in process lists).
    const mqtt = await jsonWithout(['destinations', 'add', 'brokers', '--mqtt', 'mqtt://127.0.0.1:1883', '--topic', 'orders/created', '--auth-basic', 'hook:-'], [password], `${password}\n`);
    expect(mqtt).toMatchObject({ destination: { type: 'mqtt', url: 'mqtt://127.0.0.1:1883', topic: 'orders/created' }, auth: { type: 'basic', username: 'hook', secret_set: true } });

    const listed = await user.run(['destinations', 'list', 'brokers']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${amqp.id} +amqp://127\\.0\\.0\\.1:5672/orders exchange orders, routing key order\\.created +active`, 'm'));
    expect(listed.stdout).toContain('redis://127.0.0.1:6379/0 stream orders (about 1000 entries)');
    const shown = await user.run(['destinations', 'update', mqtt.id, '--status', 'active']);
    expect(shown.stdout).toMatch(/^Destination: +mqtt:\/\/127\.0\.0\.1:1883 topic orders\/created$/m);
    expect(shown.stdout).toMatch(/^Auth: +basic \(user hook\)$/m);
    expect(shown.stdout).not.toContain(password);
  });

  it('signs in to a URL with a bearer token from stdin, static headers or OAuth2, and prints none of their secrets', async () => {
    const token = 'tok-9f8e7d6c5b4a';
    const bearer = await jsonWithout(['destinations', 'add', 'receivers', '--url', 'https://example.com/bearer', '--auth-bearer', '-'], [token], `${token}\n`);
    expect(bearer.auth).toEqual({ type: 'bearer', secret_set: true });

    const headers = await jsonWithout(
      ['destinations', 'add', 'receivers', '--url', 'https://example.com/headers', '--auth-header', 'X-Api-Key: key-value-31a', '--auth-header', 'X-Team: team-value-31b'],
      ['key-value-31a', 'team-value-31b'],
    );
    expect(headers.auth).toMatchObject({ type: 'headers', secret_set: true });
    expect(headers.auth.header_names.map((name: string) => name.toLowerCase()).sort()).toEqual(['x-api-key', 'x-team']);

    const clientSecret = 'oauth-client-secret-77c';
    const oauth2Args = [
      'destinations', 'add', 'receivers', '--url', 'https://example.com/oauth2', '--oauth2-token-url', 'http://127.0.0.1:9/oauth/token',
      '--oauth2-client-id', 'hook-relay', '--oauth2-client-secret', clientSecret, '--oauth2-scope', 'webhooks:write',
    ];
    const oauth2 = await jsonWithout(oauth2Args, [clientSecret]);
    expect(oauth2.auth).toMatchObject({ type: 'oauth2', token_url: 'http://127.0.0.1:9/oauth/token', client_id: 'hook-relay', scope: 'webhooks:write', secret_set: true });

    const text = await user.run(['destinations', 'update', oauth2.id, '--auth-bearer', token]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^Auth: +bearer token$/m);
    expect(text.stdout).not.toContain(token);
  });

  it('presents a client certificate read from PEM files, showing the certificates and never the key', async () => {
    const added = await jsonWithout(['destinations', 'add', 'receivers', '--url', 'https://example.com/mtls', '--client-cert', pem.cert, '--client-key', pem.key, '--ca', pem.ca], [keyBody(pem.key)]);
    expect(added.tls).toEqual({ client_certificate: readFileSync(pem.cert, 'utf8'), client_key_set: true, ca: readFileSync(pem.ca, 'utf8') });
    const shown = await user.run(['destinations', 'update', added.id, '--status', 'active']);
    expect(shown.stdout).toMatch(/^TLS: +mTLS on, own CA$/m);
    expect(shown.stdout).not.toContain(keyBody(pem.key));

    const removed = await user.json(['destinations', 'update', added.id, '--no-tls']);
    expect(removed.tls).toBeNull();
  });

  it('orders by a header, holds events for a delay and signs with ed25519; update removes each with --no-…', async () => {
    const added = await jsonWithout([
      'destinations', 'add', 'receivers', '--url', 'https://example.com/ordered', '--order-key-header', 'X-Customer-Id', '--on-give-up', 'skip',
      '--delay', '5m', '--signature', 'v1a', '--auth-basic', 'ops:s3cret-basic-pw',
    ], ['s3cret-basic-pw']);
    expect(added).toMatchObject({
      ordering: { key: { header: 'x-customer-id' }, on_give_up: 'skip' },
      delay_seconds: 300,
      signature_scheme: 'v1a',
      public_key: expect.stringMatching(/^whpk_/),
    });

    const text = await user.run(['destinations', 'update', added.id, '--delay', '90']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^Ordered: +by header x-customer-id, on give up skip$/m);
    expect(text.stdout).toMatch(/^Delay: +1m30s$/m);
    expect(text.stdout).toMatch(/^Signature: +v1a \(ed25519\)$/m);
    expect(text.stdout).toContain(`Public key:`);
    expect(text.stdout).toContain(added.public_key);

    // --on-give-up alone changes only that; the key stays.
    const blocking = await user.json(['destinations', 'update', added.id, '--on-give-up', 'block']);
    expect(blocking.ordering).toEqual({ key: { header: 'x-customer-id' }, on_give_up: 'block' });
    const oneOrder = await user.json(['destinations', 'update', added.id, '--ordered']);
    expect(oneOrder.ordering).toEqual({ key: null, on_give_up: 'block' });

    const cleared = await user.json(['destinations', 'update', added.id, '--no-auth', '--no-ordering', '--no-delay']);
    expect(cleared).toMatchObject({ id: added.id, auth: null, ordering: null, delay_seconds: null, signature_scheme: 'v1a' });
    const shown = await user.run(['destinations', 'update', added.id, '--status', 'active']);
    expect(shown.stdout).toMatch(/^Auth: +none$/m);
    expect(shown.stdout).toMatch(/^Ordered: +no$/m);
    expect(shown.stdout).toMatch(/^Delay: +none$/m);
  });
});

describe('hook destinations blocked and unblock', () => {
  it('lists no blocked keys for a destination with none, and refuses to unblock a key that is not blocked', async () => {
    const ordered = await user.json(['destinations', 'add', 'receivers', '--url', 'https://example.com/in-order', '--ordered']);
    expect(ordered.ordering).toEqual({ key: null, on_give_up: 'block' });

    expect(await user.json(['destinations', 'blocked', ordered.id])).toEqual({ data: [] });
    const text = await user.run(['destinations', 'blocked', ordered.id]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe('No blocked keys: every key is delivering.\n');

    const refused = await user.run(['destinations', 'unblock', ordered.id, '--key', 'cus_42']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('key_not_blocked');
  });
});

describe('usage errors', () => {
  const dst = 'dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY';
  const cases: Array<[string, string[], RegExp, string?]> = [
    ['a broker without its companion flag', ['destinations', 'add', 'brokers', '--amqp', 'amqp://127.0.0.1:5672', '--exchange', 'orders'], /--amqp needs --routing-key <key>[\s\S]*--amqp amqp:\/\/rabbit\.internal:5672 --exchange orders --routing-key order\.created/],
    ['a companion flag without its broker', ['destinations', 'add', 'brokers', '--url', 'https://example.com/x', '--topic', 'orders'], /--topic goes with --mqtt <url>/],
    ['two targets', ['destinations', 'add', 'brokers', '--url', 'https://example.com/x', '--nats', 'nats://127.0.0.1:4222', '--subject', 's'], /--url and --nats can't be used together/],
    ['a broker URL of another scheme', ['destinations', 'add', 'brokers', '--redis', 'https://127.0.0.1:6379', '--stream', 's'], /--redis is invalid: it must be a redis:\/\/ or rediss:\/\/ URL/],
    ['no target', ['destinations', 'add', 'brokers', '--delay', '5m'], /Say where the destination sends/],
    ['a delay over 24 hours', ['destinations', 'add', 'brokers', '--cli', '--delay', '25h'], /--delay is invalid: .*25h is over 24h/],
    ['a delay that is not whole seconds', ['destinations', 'add', 'brokers', '--cli', '--delay', '1500ms'], /--delay is invalid: it must be a delay of whole seconds/],
    ['a delay that is not a duration', ['destinations', 'add', 'brokers', '--cli', '--delay', 'soon'], /--delay is invalid/],
    ['--auth-basic without a colon', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--auth-basic', 'alice'], /--auth-basic takes user:password/],
    ['two kinds of auth', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--auth-bearer', 't', '--auth-basic', 'a:b'], /--auth-basic and --auth-bearer can't be used together/],
    ['an incomplete OAuth2', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--oauth2-token-url', 'https://auth.example.com/token', '--oauth2-client-id', 'c'], /OAuth2 needs --oauth2-client-secret <secret>/],
    ['a secret from empty stdin', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--auth-bearer', '-'], /--auth-bearer - read nothing from stdin/, ''],
    ['two secrets from stdin', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--auth-header', 'A: -', '--auth-header', 'B: -'], /Only one secret can be read from stdin/],
    ['a certificate file that is not there', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--client-cert', '/nonexistent/client.pem', '--client-key', '/nonexistent/key.pem'], /Cannot read --client-cert \/nonexistent\/client\.pem: ENOENT/],
    ['a certificate without its key', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--client-cert', '/nonexistent/client.pem'], /--client-cert needs --client-key <file>/],
    ['--on-give-up without ordering', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--on-give-up', 'skip'], /--on-give-up goes with ordered delivery/],
    ['two ordering keys', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--order-key-header', 'X-A', '--order-key-field', 'a'], /--order-key-header and --order-key-field can't be used together/],
    ['a signature scheme that is not one', ['destinations', 'add', 'receivers', '--url', 'https://example.com/x', '--signature', 'v2'], /--signature is invalid: it must be one of .*v1, v1a/],
    ['--no-auth with auth', ['destinations', 'update', dst, '--no-auth', '--auth-bearer', 't'], /--no-auth can't be used with --auth-bearer/],
    ['--no-ordering with ordering', ['destinations', 'update', dst, '--no-ordering', '--ordered'], /--no-ordering can't be used with --ordered/],
    ['--no-tls with a certificate', ['destinations', 'update', dst, '--no-tls', '--ca', '/nonexistent/ca.pem'], /--no-tls can't be used with --ca/],
    ['unblock without --key', ['destinations', 'unblock', dst], /--key/],
  ];
  it.each(cases)('%s: exit 2, the message on stderr, nothing on stdout', async (_name, args, message, input) => {
    expectUsageError(await user.run(args, input === undefined ? {} : { input }), message);
  });
});
