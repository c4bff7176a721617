import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import type { IngestSendMethod } from '@hook/client';
import { defineCommand, type CommandContext } from '../command.ts';
import { resolveEndpoint } from '../endpoint-ref.ts';
import { INPUT_UNREADABLE, UsageError, UserError } from '../errors.ts';
import { collectHeader } from '../option-parsers.ts';

interface SendOptions {
  data?: string;
  type?: string;
  header: Array<[string, string]>;
  method: IngestSendMethod;
  path?: string;
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

function isJsonContentType(contentType: string): boolean {
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

function isValidJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

export default defineCommand<[string], SendOptions>({
  path: ['send'],
  summary: 'Send a test event to an endpoint\'s receiving URL',
  description:
    'Send a request to the endpoint\'s receiving URL, as a webhook provider would, and print the stored event\'s id.\n' +
    'The body goes exactly as given (a file\'s bytes are never re-serialised); the content type defaults to application/json.\n' +
    'Without --data, a small JSON test event is sent.',
  examples: [
    ['hook send orders', 'a test event: {"type":"hook.test",…}'],
    ['hook send orders --data \'{"type":"order.created","id":42}\'', 'this JSON body'],
    ['hook send orders --data @payload.json -H \'stripe-signature: t=1,v1=…\'', 'a file\'s exact bytes, with a header'],
    ['cat event.xml | hook send orders --data - -H \'content-type: application/xml\'', 'the body from stdin'],
    ['hook send orders --type invoice.paid --path /stripe?live=1', 'set x-event-type, and a path and query after the URL'],
  ],
  configure(command) {
    command
      .argument('<endpoint>', 'endpoint id (ep_…) or name')
      .option('-d, --data <body>', 'the body: text (usually JSON), @file for a file\'s bytes, or - for stdin')
      .option('-t, --type <type>', 'event type, sent as the x-event-type header')
      .option('-H, --header <header>', 'a request header, \'Name: value\' (repeatable)', collectHeader, [])
      .option('-X, --method <method>', `request method: ${SEND_METHODS.join(', ')}`, parseMethod, 'POST')
      .option('--path <path>', 'path and query to add after the receiving URL, e.g. /github/push?delivery=7');
  },
  async run(context, [ref], options) {
    const { out } = context;
    const bodyless = BODYLESS_METHODS.includes(options.method);
    if (bodyless && options.data !== undefined) {
      throw new UsageError(`--data cannot go with ${options.method}: the relay does not read ${options.method} bodies`, 'Use -X POST (the default), PUT, PATCH or DELETE to send a body.');
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of options.header) {
      const key = name.toLowerCase();
      headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
    }
    if (options.type !== undefined) headers['x-event-type'] = options.type;
    let body: Buffer | undefined;
    if (!bodyless) {
      body = options.data === undefined
        ? Buffer.from(JSON.stringify({ type: options.type ?? 'hook.test', message: 'A test event sent by hook send', sent_at: new Date().toISOString() }))
        : await bodyFrom(context, options.data);
      headers['content-type'] ??= 'application/json';
      if (body.length > 0 && isJsonContentType(headers['content-type']) && !isValidJson(body)) {
        out.warn(`the body is not valid JSON but the content type is ${headers['content-type']}; it is sent as it is.`);
      }
    }
    const path = options.path === undefined || options.path === '' ? '' : /^[/?]/.test(options.path) ? options.path : `/${options.path}`;

    const client = await context.client();
    const endpoint = await resolveEndpoint(client, ref);
    const accepted = await client.ingest.send(`${endpoint.url}${path}`, { method: options.method, headers, body });
    await out.result({ ...accepted, endpoint_id: endpoint.id }, [
      { kind: 'text', text: `Sent ${accepted.id} to ${endpoint.name} (${endpoint.id}): ${accepted.status}, ${body?.length ?? 0} bytes.` },
    ]);
    out.hint(`See it: hook events get ${accepted.id}`);
  },
});
