import { InvalidArgumentError } from 'commander';
import { countOf, type DeliveryMessage, EVENT_TYPE_MAX_CHARS, type RecordedMessage, STREAM_EVENT_TYPES_MAX, STREAM_MAX_IN_FLIGHT_LIMIT } from '@hook/core';
import { HookStream, type SigningSecret } from '@hook/client';
import { HookApiError } from '@hook/client/errors';
import { defineCommand, type CommandContext } from '../command.ts';
import { DEFAULT_PROFILE } from '../config.ts';
import { UsageError } from '../errors.ts';
import { chooseListenEndpoint, type ChosenEndpoint, type EndpointChoice } from '../forward/endpoint-choice.ts';
import { deliveryLines, deliveryRecord, type DeliveryReport, type PrintBody } from '../forward/delivery-report.ts';
import { LocalForwarder, type ForwardOutcome, type Forwarding } from '../forward/local-forwarder.ts';
import { describeTarget, parseForwardTarget } from '../forward/target.ts';
import { noteConnection, stopSignal, untilRelayAnswers, watchConnection, type ConnectionWatch } from '../stream-connection.ts';
import { targetText } from '../views.ts';
import packageJson from '../../package.json' with { type: 'json' };

interface ListenOptions {
  endpoint?: string;
  path?: string;
  skipMissed?: boolean;
  maxInFlight?: number;
  events?: string[];
  printBody?: PrintBody;
  printSecret?: boolean;
}

/** After Ctrl-C, how long deliveries already being forwarded get to finish (and be reported) before they are abandoned. */
const STOP_GRACE_MS = 5000;

function parseMaxInFlight(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > STREAM_MAX_IN_FLIGHT_LIMIT) throw new InvalidArgumentError(`must be a whole number from 1 to ${STREAM_MAX_IN_FLIGHT_LIMIT}.`);
  return n;
}

/** `--events invoice.paid,charge.failed` (repeatable): the event types to take. */
function parseEventTypes(value: string, previous: string[] | undefined): string[] {
  const types = value.split(',').map((type) => type.trim()).filter(Boolean);
  if (types.length === 0) throw new InvalidArgumentError('give event types separated by commas, e.g. --events invoice.paid,charge.failed.');
  const tooLong = types.find((type) => type.length > EVENT_TYPE_MAX_CHARS);
  if (tooLong) throw new InvalidArgumentError(`event types are at most ${EVENT_TYPE_MAX_CHARS} characters ('${tooLong.slice(0, 40)}…' is longer).`);
  const all = [...new Set([...(previous ?? []), ...types])];
  if (all.length > STREAM_EVENT_TYPES_MAX) throw new InvalidArgumentError(`at most ${STREAM_EVENT_TYPES_MAX} event types.`);
  return all;
}

function parsePrintBody(value: string): PrintBody {
  if (value === 'failed' || value === 'all') return value;
  // `hook listen --print-body 3000`: the optional value took the port.
  if (/^\d+$|:\/\/|^[\w.-]+:\d+/.test(value)) throw new InvalidArgumentError(`'${value}' looks like the port or URL; put it first: hook listen ${value} --print-body.`);
  throw new InvalidArgumentError("must be 'failed' (the default: --print-body alone) or 'all'.");
}

/** How the endpoint line ends: why this endpoint. */
const CHOICE_TEXT: Record<EndpointChoice, (profile: string) => string> = {
  flag: () => 'from --endpoint',
  default: (profile) => (profile === DEFAULT_PROFILE ? 'the default endpoint' : `the default endpoint of profile '${profile}'`),
  only: () => "this account's only endpoint",
  created: () => 'created now',
};

/** Notices about the choice of endpoint on stderr: text, or `{"type":"notice"}` lines in --json mode. */
function notice(context: CommandContext, text: string): void {
  context.out.note(context.out.json ? JSON.stringify({ type: 'notice', message: text }) : text);
}

/** The endpoint and the secret its deliveries are signed with: its first cli destination's, or (mirroring) the endpoint's. */
async function endpointAndSecret(context: CommandContext, options: ListenOptions, listenArgs: string): Promise<ChosenEndpoint & { secret: SigningSecret; servedId: string | undefined }> {
  const client = await context.client();
  const chosen = await chooseListenEndpoint(context, client, options.endpoint, listenArgs);
  const served = chosen.endpoint.destinations.find((destination) => destination.destination.type === 'cli');
  const secret = served ? await client.destinations.secret(served.id) : await client.endpoints.secret(chosen.endpoint.id);
  return { ...chosen, secret, servedId: served?.id };
}

export default defineCommand<[string | undefined], ListenOptions>({
  path: ['listen'],
  summary: 'Forward an endpoint\'s events to a local server as they arrive',
  description: [
    'Forward every event of an endpoint to a local server: a POST with the exact body bytes, the original headers and the signature headers, as the relay would deliver it. Prints the endpoint, its ingest URL and signing secret (stderr), then one line per delivery (stdout): time, status, method and path, duration, event type, event id, and what the relay made of it (attempt, next retry). With --json: a {"type":"ready",…} line (no secret: stdout is often logged; hook listen --print-secret prints it), then one {"type":"delivery",…} line per delivery; connection changes go to stderr as {"type":"connection",…} lines.',
    'Which endpoint: --endpoint (an id or a name; a name no endpoint has is created), else the profile\'s default endpoint (set by the first `hook endpoints create`, changed with `hook endpoints use <name>`), else the account\'s only endpoint. With several and no default, hook listen asks you to choose; with none it creates one (cli-<hostname>) and says so. For an endpoint with a cli destination the local server\'s answers decide the event\'s status (2xx delivered, anything else retried on the relay\'s schedule); for one with only URL destinations the events are mirrored here and the answers are not recorded.',
    'Events that arrived while nothing listened are forwarded first, oldest first (--skip-missed leaves them). --events takes only the types given; the others stay on the relay for a listener without --events. A lost connection is noticed within seconds (heartbeats) and re-opened with backoff; deliveries missed meanwhile follow. If the relay is down at start, hook listen waits for it. Ctrl-C stops (exit 0). Docs: docs/cli.md#hook-listen',
  ].join('\n\n'),
  examples: [
    ['hook listen 3000', 'forward the default endpoint\'s events to http://127.0.0.1:3000/'],
    ['hook listen 3000 --endpoint stripe --path /webhooks/stripe', 'one endpoint (created if new) to one route'],
    ['hook listen 3000 --events invoice.paid,charge.failed --print-body', 'only two event types; show your server\'s answer when it fails'],
    ['hook listen http://localhost:8000/hooks --skip-missed', 'only events that arrive from now on'],
    ['hook listen --print-secret', 'print the signing secret your server verifies with, and exit'],
    ['hook listen 3000 --json | jq -c \'select(.type == "delivery")\'', 'JSON lines, for scripts'],
  ],
  configure(command) {
    command
      .argument('[port|url]', 'a local port (forwards to http://127.0.0.1:<port>) or a URL; not needed with --print-secret')
      .option('--endpoint <endpoint>', 'endpoint id or name; a new name is created (default: the profile\'s default endpoint, see `hook endpoints use`)')
      .option('--path <path>', 'path on the local server to forward to (replaces the URL\'s path)')
      .option('--events <types>', `forward only events of these types, comma-separated (at most ${STREAM_EVENT_TYPES_MAX}); the others wait on the relay`, parseEventTypes)
      .option('--print-body [which]', 'print your server\'s answer under failed deliveries (\'failed\', the default), or under every one (\'all\')', parsePrintBody)
      .option('--print-secret', 'print the endpoint\'s signing secret and exit')
      .option('--skip-missed', 'do not forward events that arrived before hook listen started')
      .option('--max-in-flight <n>', `deliveries forwarded at once, 1–${STREAM_MAX_IN_FLIGHT_LIMIT} (default: the relay's, 32)`, parseMaxInFlight);
  },
  async run(context, [targetArgument], rawOptions) {
    const { out } = context;
    // `--print-body` alone means the failed deliveries.
    const options: ListenOptions = { ...rawOptions, printBody: (rawOptions.printBody as PrintBody | true | undefined) === true ? 'failed' : rawOptions.printBody };
    if (options.printSecret) {
      const found = await endpointAndSecret(context, options, targetArgument ?? '3000');
      for (const text of found.notices) notice(context, text);
      await out.result({ endpoint_id: found.endpoint.id, endpoint_name: found.endpoint.name, secret: found.secret.secret }, [{ kind: 'text', text: found.secret.secret }]);
      return 0;
    }
    if (targetArgument === undefined) throw new UsageError('hook listen needs the port or URL of your server', 'Give the port your server listens on (`hook listen 3000`) or its URL (`hook listen http://localhost:3000/webhooks`).');
    const target = parseForwardTarget(targetArgument, options.path);
    const client = await context.client();
    const apiKey = context.settings.apiKey!;
    const apiUrl = client.apiUrl;
    /** Deliveries being forwarded to the local server. */
    const inFlight = new Set<Forwarding>();
    /** Told when a delivery leaves `inFlight` or `unconfirmed`, or all are abandoned: what the shutdown waits on. */
    const settling = changeSignal();
    const stop = stopSignal(() => {
      for (const forwarding of inFlight) forwarding.abort();
      settling.notify();
    });
    const forwarder = new LocalForwarder(target);
    let stream: HookStream | undefined;
    let watch: ConnectionWatch | undefined;
    try {
      const found = await untilRelayAnswers(out, apiUrl, () => endpointAndSecret(context, options, targetArgument), stop);
      if (!found) return 0;
      const { endpoint, created, secret, servedId, choice } = found;
      const mirror = servedId === undefined;
      const eventTypes = options.events ?? null;
      for (const text of found.notices) notice(context, text);
      if (!out.json) {
        out.note(`Endpoint:    ${endpoint.name} (${endpoint.id}), ${CHOICE_TEXT[choice](context.settings.profile)}`);
        out.note(`Ingest URL:  ${endpoint.url}`);
        out.note(`Secret:      ${secret.secret}`);
        out.note(`Forward to:  ${describeTarget(target)}`);
        if (eventTypes) out.note(`Events:      only ${eventTypes.join(', ')} (others wait on the relay for a \`hook listen\` without --events)`);
        if (mirror) out.note(`Note: this endpoint delivers only to URLs (${endpoint.destinations.map((destination) => targetText(destination.destination)).join(', ')}); events are mirrored here and answers are not recorded.`);
        if (endpoint.status !== 'active') out.warn(`The endpoint is ${endpoint.status}: ${endpoint.status === 'paused' ? 'events are held until it is resumed' : 'it refuses new events'}.`);
        out.hint('Pick another: --endpoint <name> (this run), hook endpoints use <name> (default)');
      }

      stream = new HookStream({
        apiUrl,
        apiKey,
        mode: 'listen',
        endpointId: endpoint.id,
        skipMissed: options.skipMissed ?? false,
        maxInFlight: options.maxInFlight,
        ...(eventTypes ? { eventTypes } : {}),
        userAgent: `hook-cli/${packageJson.version}`,
      });
      const live = stream;
      let announced = false;
      /** Whether the relay sends `recorded` messages (hello.recorded_messages). */
      let relayRecords = false;
      let refusal: HookApiError | undefined;
      /** Deliveries answered and reported, waiting for the relay's `recorded` message before they are printed. */
      const unconfirmed = new Map<string, DeliveryReport>();
      /** Deliveries of a lost connection answered since: the answer goes on the next connection, whose `recorded` message they wait for. */
      const answeredLate = new Map<string, DeliveryReport>();
      const print = (report: DeliveryReport): void => {
        if (out.json) {
          out.record(deliveryRecord(report, options.printBody), '');
          return;
        }
        const [first, ...more] = deliveryLines(report, { terminal: out.interactive, printBody: options.printBody });
        out.record(null, first!);
        // The rows under it (the verdict on a terminal, the local answer) are for people only.
        for (const line of more) out.record(null, line);
      };
      const printUnconfirmed = (): void => {
        for (const report of unconfirmed.values()) print({ ...report, unconfirmed: 'connection_lost' });
        unconfirmed.clear();
        settling.notify();
      };
      /** At the end: late answers no connection took. */
      const printUnsent = (): void => {
        for (const report of answeredLate.values()) print({ ...report, reported: false });
        answeredLate.clear();
      };

      live.on('state', (state) => {
        if (state.state === 'open') {
          relayRecords = state.hello.recorded_messages === true;
          if (eventTypes && !Array.isArray(state.hello.event_types)) {
            // A relay that cannot filter would forward (and let this server decide) every type.
            refusal ??= new HookApiError({
              type: 'urn:hook:error:unexpected_response', title: 'Relay cannot filter event types', status: 502, code: 'unexpected_response',
              detail: `The relay at ${apiUrl} does not support --events (it would forward every event type)`,
              fix: 'Update the relay to the release of this hook CLI, or run hook listen without --events.', request_id: '',
            });
            void live.close();
            return;
          }
          if (!announced) {
            announced = true;
            if (out.json) {
              out.record(
                { type: 'ready', endpoint, created, choice, ingest_url: endpoint.url, forward_to: describeTarget(target), mirror, event_types: eventTypes, session_id: state.hello.session_id },
                '',
              );
            }
          }
        } else {
          // The connection is gone: the relay's verdicts on results already sent will not come.
          printUnconfirmed();
        }
      });
      watch = watchConnection(out, live, { apiUrl, client, endpointId: endpoint.id, connectedText: `Connected. Forwarding events to ${describeTarget(target)} (Ctrl-C to stop).` });
      live.on('message', (message) => {
        if (message.type === 'recorded') {
          onRecorded(message);
          return;
        }
        if (message.type !== 'delivery' || stop.isStopped()) return;
        const forwardedAt = new Date().toISOString();
        const forwarding = forwarder.forward(message);
        inFlight.add(forwarding);
        void forwarding.outcome.then((outcome) => {
          inFlight.delete(forwarding);
          settling.notify();
          // Abandoned at shutdown: left unanswered, so the relay offers it again.
          if (forwarding.aborted) return;
          const sent = live.sendResult({
            delivery_id: message.delivery_id,
            status: outcome.status,
            duration_ms: outcome.durationMs,
            error: outcome.error,
            response_body: outcome.responseBody,
          });
          onAnswered(message, outcome, forwardedAt, sent);
        });
      });

      function onAnswered(delivery: DeliveryMessage, outcome: ForwardOutcome, forwardedAt: string, sent: ReturnType<HookStream['sendResult']>): void {
        // Kept until the relay's verdict comes: without the body and headers, which the line does not show.
        const report: DeliveryReport = { delivery: { ...delivery, headers: {}, body_base64: '' }, outcome, forwardedAt, reported: sent !== false, recorded: undefined };
        if (sent === 'queued') answeredLate.set(delivery.delivery_id, { ...report, late: true });
        else if (!sent || delivery.mirror) print(report);
        else if (sent === 'late') unconfirmed.set(delivery.delivery_id, { ...report, late: true });
        else if (!relayRecords) print({ ...report, unconfirmed: 'relay_silent' });
        else unconfirmed.set(delivery.delivery_id, report);
      }

      function onRecorded(recorded: RecordedMessage): void {
        const report = unconfirmed.get(recorded.delivery_id) ?? answeredLate.get(recorded.delivery_id);
        if (!report) return;
        unconfirmed.delete(recorded.delivery_id);
        answeredLate.delete(recorded.delivery_id);
        settling.notify();
        print({ ...report, recorded });
      }

      live.start();

      const ending = await Promise.race([stop.stopped.then(() => 'stopped' as const), live.done]);
      if (refusal) throw refusal;
      if (ending !== 'stopped') {
        for (const forwarding of inFlight) forwarding.abort();
        printUnconfirmed();
        printUnsent();
        // A fatal refusal (bad key, endpoint gone): the relay's problem, exit 1.
        throw ending ?? new Error('the stream closed without a reason');
      }
      if (inFlight.size > 0 || unconfirmed.size > 0) {
        if (inFlight.size > 0) {
          noteConnection(out, { state: 'stopping', in_flight: inFlight.size }, `Stopping: waiting up to ${STOP_GRACE_MS / 1000} s for ${countOf(inFlight.size, 'delivery', 'deliveries')} in flight (Ctrl-C again to abandon them)…`);
        }
        // Results already sent get their verdict too, within the same grace.
        let graceOver = false;
        const grace = setTimeout(() => {
          graceOver = true;
          settling.notify();
        }, STOP_GRACE_MS);
        while ((inFlight.size > 0 || unconfirmed.size > 0) && !graceOver && !(inFlight.size > 0 && [...inFlight].every((forwarding) => forwarding.aborted))) {
          await settling.next();
        }
        clearTimeout(grace);
        if (inFlight.size > 0) {
          noteConnection(out, { state: 'stopping', abandoned: inFlight.size }, `Abandoned ${countOf(inFlight.size, 'delivery', 'deliveries')}; the relay offers them again to the next listener.`);
          for (const forwarding of inFlight) forwarding.abort();
        }
        printUnconfirmed();
      }
      printUnsent();
      return 0;
    } finally {
      await stream?.close();
      watch?.dispose();
      await forwarder.close();
      stop.dispose();
      if (stream && stop.isStopped()) noteConnection(out, { state: 'closed' }, 'Stopped.');
    }
  },
});

/** A wait for "something changed" without polling: `next()` resolves at the following `notify()`. */
function changeSignal(): { next(): Promise<void>; notify(): void } {
  let waiting: (() => void)[] = [];
  return {
    next: () => new Promise<void>((resolve) => waiting.push(resolve)),
    notify: () => {
      const resolved = waiting;
      waiting = [];
      for (const resolve of resolved) resolve();
    },
  };
}
