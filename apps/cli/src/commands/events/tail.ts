import { Option } from 'commander';
import { EVENT_STATUSES, STREAM_PROTOCOL_VERSION, type EventStatus } from '@hook/core';
import { HookStream, type EventSummary, type HookClient } from '@hook/client';
import { HookApiError } from '@hook/client/errors';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { ENDPOINT_NOT_FOUND, UserError } from '../../errors.ts';
import { noteConnection, stopSignal, untilRelayAnswers, watchConnection, type ConnectionWatch } from '../../stream-connection.ts';
import { missedEventLine, tailLine } from '../../views.ts';
import packageJson from '../../../package.json' with { type: 'json' };

interface TailOptions {
  endpoint?: string;
  status?: EventStatus;
}

/**
 * Endpoint names by id, for lines a person reads (the stream names endpoints by id): the
 * list is read once at the start, and again when an event names an endpoint not in it
 * (one created since). An id that is still unknown after that is shown as it is.
 */
class EndpointNames {
  readonly #client: HookClient;
  readonly #names = new Map<string, string>();
  readonly #notFound = new Set<string>();
  #reading: Promise<void> | undefined;

  constructor(client: HookClient) {
    this.#client = client;
  }

  async read(): Promise<void> {
    for await (const endpoint of this.#client.endpoints.iterate()) this.#names.set(endpoint.id, endpoint.name);
  }

  /** The name known now, or the id. */
  known(id: string): string {
    return this.#names.get(id) ?? id;
  }

  /** The name, reading the list again (once at a time) for an id not seen before. */
  async nameOf(id: string): Promise<string> {
    if (this.#names.has(id) || this.#notFound.has(id)) return this.known(id);
    this.#reading ??= this.read().finally(() => (this.#reading = undefined));
    await this.#reading.catch(() => undefined);
    if (!this.#names.has(id)) this.#notFound.add(id);
    return this.known(id);
  }
}

/** An event caught up on after a reconnect, as the stream's `event.received` message (with `missed: true`) for --json. */
function missedRecord(event: EventSummary): Record<string, unknown> {
  const { id, endpoint_id, type, method, path, query, content_type, size, received_at, status, verification } = event;
  return {
    type: 'event.received',
    version: STREAM_PROTOCOL_VERSION,
    event: { id, endpoint_id, type, method, path, query, content_type, size, received_at, status, verification },
    missed: true,
  };
}

/** The relay ended a tail of one endpoint because the endpoint was deleted: said in the CLI's words. */
function tailEnded(error: HookApiError, ref: string | undefined): Error & { code?: string } {
  if (error.code === 'endpoint_gone' && ref !== undefined) {
    return new UserError(
      ENDPOINT_NOT_FOUND,
      `The endpoint '${ref}' was deleted while hook events tail watched it`,
      'Run `hook endpoints list` to see the endpoints left; `hook events tail` without --endpoint watches all of them.',
    );
  }
  return error;
}

export default defineCommand<[], TailOptions>({
  path: ['events', 'tail'],
  summary: 'Watch events and delivery attempts as they happen',
  description: [
    'Print each event as it is received and each delivery attempt as it finishes, live, until Ctrl-C. On a terminal each line is cut to its width, with colours; endpoints are shown by name.',
    'An attempt line shows its own delivery\'s status and where it went (`orders → api.example.com`, or `→ hook listen`), then `event <status>` when the event\'s status differs: with several destinations a 200 to one leaves the event pending or retrying while another has yet to succeed.',
    'A lost connection is re-opened with backoff; a terminal shows one status line saying how long it has been down, and on return the events received meanwhile are shown. A tail of an endpoint that is deleted ends with exit 1.',
    '--json prints the stream\'s messages as they arrive, one per line: {"type":"event.received",…} and {"type":"attempt.finished","status":…,"destination":{"id","type","url"},…}; connection changes go to stderr as {"type":"connection",…} lines. Docs: docs/cli.md#hook-events-tail',
  ].join('\n\n'),
  examples: [
    ['hook events tail', 'everything, for every endpoint'],
    ['hook events tail --endpoint orders --status failed', 'only attempts that left an event failed'],
    ['hook events tail --json | jq -c \'select(.type == "attempt.finished")\'', 'attempts as JSON lines'],
  ],
  configure(command) {
    command
      .option('--endpoint <endpoint>', 'only this endpoint (id or name)')
      .addOption(new Option('--status <status>', 'only events and attempts that leave the event in this status (an attempt line shows its own delivery\'s status, and the event\'s after it when they differ)').choices(EVENT_STATUSES));
  },
  async run(context, _args, options) {
    const { out } = context;
    const client = await context.client();
    const apiUrl = client.apiUrl;
    const stop = stopSignal();
    let stream: HookStream | undefined;
    let watch: ConnectionWatch | undefined;
    try {
      // Names only for people: --json prints the stream's messages as they are.
      const names = out.json ? undefined : new EndpointNames(client);
      const ready = await untilRelayAnswers(out, apiUrl, async () => {
        const endpointId = options.endpoint === undefined ? undefined : await endpointIdOf(client, options.endpoint);
        await names?.read();
        return { endpointId };
      }, stop);
      if (!ready) return 0;
      stream = new HookStream({
        apiUrl,
        apiKey: context.settings.apiKey!,
        mode: 'tail',
        endpointId: ready.endpointId,
        status: options.status,
        userAgent: `hook-cli/${packageJson.version}`,
      });
      const scope = options.endpoint ? `endpoint ${options.endpoint}` : 'every endpoint';
      watch = watchConnection(out, stream, {
        apiUrl,
        client,
        endpointId: ready.endpointId,
        status: options.status,
        connectedText: `Connected. Watching ${scope}${options.status ? ` (status ${options.status})` : ''}; Ctrl-C to stop.`,
        fatalError: (fatal) => tailEnded(fatal, options.endpoint),
        showMissed: (events, write) => {
          for (const event of events) write(missedRecord(event), missedEventLine(event, names?.known(event.endpoint_id) ?? event.endpoint_id));
        },
      });
      // Lines are written in the order messages came, each once its endpoint's name is known.
      let written: Promise<void> = Promise.resolve();
      stream.on('message', (message) => {
        if (message.type !== 'event.received' && message.type !== 'attempt.finished') return;
        if (!names) {
          out.record(message, '');
          return;
        }
        const endpointId = message.type === 'event.received' ? message.event.endpoint_id : message.endpoint_id;
        written = written.then(async () => out.record(message, tailLine(message, await names.nameOf(endpointId))));
      });
      stream.start();
      const ending = await Promise.race([stop.stopped.then(() => 'stopped' as const), stream.done]);
      if (ending !== 'stopped') throw ending === null ? new Error('the stream closed without a reason') : tailEnded(ending, options.endpoint);
      await written;
      return 0;
    } catch (error) {
      throw options.endpoint === undefined ? error : endpointErrorFor(options.endpoint, error);
    } finally {
      await stream?.close();
      watch?.dispose();
      stop.dispose();
      if (stream && stop.isStopped()) noteConnection(out, { state: 'closed' }, 'Stopped.');
    }
  },
});
