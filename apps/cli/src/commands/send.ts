import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import type { IngestSendMethod } from '@hook/client';
import { isJsonContentType } from '@hook/core';
import { defineCommand, type CommandContext } from '../command.ts';
import { INPUT_UNREADABLE, UsageError, UserError } from '../errors.ts';
import { fixtureRequest, readFixture } from '../event-fixture.ts';
import { collectHeader } from '../option-parsers.ts';
import { endpointToSendTo } from '../send-target.ts';
import { readOptionFile } from '../endpoint-rules.ts';
import { resignedHeaders, resignerFor, RESIGN_PROVIDERS } from '../trigger/resign.ts';
import { sentOutcome } from '../sent-outcome.ts';

interface SendOptions {
  endpoint?: string;
  data?: string;
  fixture?: string;
  type?: string;
  header: Array<[string, string]>;
  method?: IngestSendMethod;
  path?: string;
  resign?: string;
  secretFile?: string;
}

/** Methods `hook send` takes; GET and OPTIONS carry no body (the relay does not read one). */
const SEND_METHODS: readonly IngestSendMethod[] = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET', 'OPTIONS'];
const BODYLESS_METHODS: readonly IngestSendMethod[] = ['GET', 'OPTIONS'];

function parseMethod(value: string): IngestSendMethod {
  const method = value.toUpperCase() as IngestSendMethod;
  if (!SEND_METHODS.includes(method)) throw new InvalidArgumentError(`must be one of ${SEND_METHODS.join(', ')}.`);
  return method;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** The body bytes exactly as given: a file's bytes, stdin's, or the text of --data. Never parsed and re-serialised. */
async function bodyFrom(context: CommandContext, data: string): Promise<Buffer> {
  if (data === '-' || data === '@-') {
    if (context.stdin.isTTY) context.out.note('Reading the body from stdin; end it with Ctrl-D.');
    return readStream(context.stdin);
  }
  if (data.startsWith('@')) {
    const path = data.slice(1);
    try {
      return await readFile(path);
    } catch (error) {
      throw new UserError(INPUT_UNREADABLE, `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
  }
  return Buffer.from(data, 'utf8');
}

function isValidJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

/** `--path`: a path and query after the receiving URL, with the leading / added when missing. */
function pathSuffix(path: string): string {
  return path === '' ? '' : /^[/?]/.test(path) ? path : `/${path}`;
}

export default defineCommand<[string | undefined], SendOptions>({
  path: ['send'],
  summary: 'Send a test event to an endpoint\'s receiving URL',
  description:
    'Send a request to the endpoint\'s receiving URL, as a webhook provider would, and print the stored event\'s id.\n' +
    'The body goes exactly as given (a file\'s bytes are never re-serialised); the content type defaults to application/json.\n' +
    'The event\'s type is what the relay reads from the request: --type (the x-event-type header) if given, else the JSON body\'s top-level "type" field ' +
    '(`hook send orders --data \'{"type":"order.created"}\'` stores an order.created event), else none.\n' +
    'Without --data, a small JSON test event is sent. --fixture sends a fixture file (`hook events export`) again: the same method, path, query, ' +
    'headers and body bytes; with --resign <provider> --secret-file <path> it is signed again with a fresh timestamp (Stripe, Slack and Standard Webhooks ' +
    'sign one, so a verifying endpoint refuses a capture older than its tolerance), the body unchanged.\n' +
    'Without an endpoint: the profile\'s default endpoint (`hook endpoints use`), else the account\'s only one.',
  examples: [
    ['hook send orders', 'a test event: {"type":"hook.test",…}'],
    ['hook send orders --data \'{"type":"order.created","id":42}\'', 'this JSON body'],
    ['hook send orders --data @payload.json -H \'stripe-signature: t=1,v1=…\'', 'a file\'s exact bytes, with a header'],
    ['cat event.xml | hook send orders --data - -H \'content-type: application/xml\'', 'the body from stdin'],
    ['hook send orders --type invoice.paid --path /stripe?live=1', 'set x-event-type, and a path and query after the URL'],
    ['hook send --fixture order-paid.json --endpoint orders', 'a saved event (hook events export), byte for byte'],
    ['hook send --fixture invoice.json --resign stripe --secret-file stripe-secret.txt', 'a saved Stripe event, signed again now'],
  ],
  configure(command) {
    command
      .argument('[endpoint]', 'endpoint id (ep_…) or name (default: the profile\'s default endpoint, else the only one)')
      .option('--endpoint <endpoint>', 'the endpoint, as an option (the same as the argument)')
      .option('-d, --data <body>', 'the body: text (usually JSON), @file for a file\'s bytes, or - for stdin')
      .option('--fixture <file>', 'send a fixture file (from `hook events export`) again: its method, path, query, headers and exact body')
      .option('-t, --type <type>', 'event type, sent as the x-event-type header (without it, the JSON body\'s "type" field is the type)')
      .option('-H, --header <header>', 'a request header, \'Name: value\' (repeatable)', collectHeader, [])
      .option('-X, --method <method>', `request method: ${SEND_METHODS.join(', ')} (default POST)`, parseMethod)
      .option('--path <path>', 'path and query to add after the receiving URL, e.g. /github/push?delivery=7')
      .option('--resign <provider>', `with --fixture: sign it again with a fresh timestamp, as ${RESIGN_PROVIDERS.join(', ')} sign (the body unchanged)`)
      .option('--secret-file <path>', 'with --resign: the signing secret, read from this file');
  },
  async run(context, [argument], options) {
    const { out } = context;
    if (argument !== undefined && options.endpoint !== undefined && argument !== options.endpoint) {
      throw new UsageError(`Two endpoints given: '${argument}' and --endpoint '${options.endpoint}'`, 'Name the endpoint once, as the argument or with --endpoint.');
    }
    if (options.fixture !== undefined && options.data !== undefined) throw new UsageError('--fixture and --data cannot go together: the fixture holds the body', 'Send the fixture as it is, or leave --fixture out to send --data.');
    if (options.fixture !== undefined && options.method !== undefined) throw new UsageError('--fixture and -X cannot go together: the fixture holds the method', 'Send the fixture as it is (edit its "method" to change it).');
    if (options.resign !== undefined && options.fixture === undefined) throw new UsageError('--resign signs a fixture again: it needs --fixture <file>', 'Export the event first (`hook events export <event> --fixture <file>`), then send it with --fixture <file> --resign <provider> --secret-file <path>.');
    if ((options.resign === undefined) !== (options.secretFile === undefined)) throw new UsageError('--resign and --secret-file go together', 'Give both: --resign <provider> --secret-file <path> (the secret the endpoint verifies with, in a file).');
    const resigner = options.resign === undefined ? undefined : resignerFor(options.resign);
    const captured = options.fixture === undefined ? undefined : await readFixture(options.fixture);
    const fixture = captured === undefined ? undefined : fixtureRequest(captured);
    const method = fixture?.method ?? options.method ?? 'POST';
    const bodyless = BODYLESS_METHODS.includes(method);
    if (bodyless && options.data !== undefined) {
      throw new UsageError(`--data cannot go with ${method}: the relay does not read ${method} bodies`, 'Use -X POST (the default), PUT, PATCH or DELETE to send a body.');
    }
    // A fixture's headers first; -H and --type add to them or replace them.
    const headers: Record<string, string> = { ...fixture?.headers };
    const given = new Set<string>();
    for (const [name, value] of options.header) {
      const key = name.toLowerCase();
      headers[key] = !given.has(key) || headers[key] === undefined ? value : `${headers[key]}, ${value}`;
      given.add(key);
    }
    if (options.type !== undefined) headers['x-event-type'] = options.type;
    if (resigner !== undefined) {
      const secret = (await readOptionFile(options.secretFile!, '--secret-file')).replace(/\r?\n$/, '');
      const signedAt = Date.now();
      Object.assign(headers, resignedHeaders(resigner, secret, fixture!.body ?? Buffer.alloc(0), signedAt, captured!.headers, options.fixture!));
      out.note(`Signed again as ${resigner.title} signs, with the timestamp ${Math.floor(signedAt / 1000)} (now); the body is the fixture's, unchanged.`);
    }
    let body: Buffer | undefined = fixture?.body;
    if (!bodyless && fixture === undefined) {
      body = options.data === undefined
        ? Buffer.from(JSON.stringify({ type: options.type ?? 'hook.test', message: 'A test event sent by hook send', sent_at: new Date().toISOString() }))
        : await bodyFrom(context, options.data);
      headers['content-type'] ??= 'application/json';
      if (body.length > 0 && isJsonContentType(headers['content-type']) && !isValidJson(body)) {
        out.warn(`the body is not valid JSON but the content type is ${headers['content-type']}; it is sent as it is.`);
      }
    }
    const suffix = options.path !== undefined ? pathSuffix(options.path) : (fixture?.suffix ?? '');

    const client = await context.client();
    const endpoint = await endpointToSendTo(context, client, argument ?? options.endpoint, options.fixture === undefined ? 'hook send' : `hook send --fixture ${options.fixture}`);
    const accepted = await client.ingest.send(`${endpoint.url}${suffix}`, { method, headers, body });
    const what = options.fixture === undefined ? accepted.id : `${options.fixture} as ${accepted.id}`;
    const outcome = sentOutcome(accepted, endpoint);
    await out.result({ ...accepted, endpoint_id: endpoint.id, ...outcome.fields }, [
      { kind: 'text', text: `Sent ${what} to ${endpoint.name} (${endpoint.id}): ${accepted.status}, ${body?.length ?? 0} bytes${outcome.meaning}.` },
    ]);
    out.hint(`See it: hook events get ${accepted.id}`);
  },
});
