import { hostname } from 'node:os';
import { InvalidArgumentError } from 'commander';
import { STREAM_MAX_IN_FLIGHT_LIMIT, type DeliveryMessage } from '@hook/core';
import { HookStream, type Endpoint, type HookClient, type SigningSecret } from '@hook/client';
import { defineCommand } from '../command.ts';
import { resolveEndpoint } from '../endpoint-ref.ts';
import { UserError } from '../errors.ts';
import { LocalForwarder, type ForwardOutcome } from '../forward/local-forwarder.ts';
import { describeTarget, parseForwardTarget } from '../forward/target.ts';
import { noteConnection, reportStreamState, stopSignal, untilRelayAnswers } from '../stream-connection.ts';
import { targetText, time } from '../views.ts';
import packageJson from '../../package.json' with { type: 'json' };

interface ListenOptions {
  endpoint?: string;
  path?: string;
  skipMissed?: boolean;
  maxInFlight?: number;
}

/** After Ctrl-C, how long deliveries already being forwarded get to finish (and be reported) before they are abandoned. */
const STOP_GRACE_MS = 5000;

/** The endpoint `hook listen` uses without --endpoint: one per machine, so two laptops on one account do not share events. */
export function defaultEndpointName(host: string = hostname()): string {
  return `cli-${host.toLowerCase().split('.')[0] || 'local'}`.slice(0, 200);
}

function parseMaxInFlight(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > STREAM_MAX_IN_FLIGHT_LIMIT) throw new InvalidArgumentError(`must be a whole number from 1 to ${STREAM_MAX_IN_FLIGHT_LIMIT}.`);
  return n;
}

/** The endpoint to listen on: an id must exist; a name is created (destination cli) when no endpoint has it. */
async function endpointToListenOn(client: HookClient, ref: string): Promise<{ endpoint: Endpoint; created: boolean }> {
  try {
    return { endpoint: await resolveEndpoint(client, ref), created: false };
  } catch (error) {
    if (ref.startsWith('ep_') || !(error instanceof UserError) || error.code !== 'endpoint_not_found') throw error;
  }
  return { endpoint: await client.endpoints.create({ name: ref, destination: { type: 'cli' } }), created: true };
}

/** One JSON line per forwarded delivery (docs/cli.md#hook-listen). */
function deliveryRecord(delivery: DeliveryMessage, outcome: ForwardOutcome, forwardedAt: string, reported: boolean): Record<string, unknown> {
  return {
    type: 'delivery',
    event_id: delivery.event.id,
    delivery_id: delivery.delivery_id,
    attempt: delivery.attempt,
    event_type: delivery.event.type,
    received_at: delivery.event.received_at,
    forwarded_at: forwardedAt,
    method: 'POST',
    url: outcome.url,
    status: outcome.status,
    duration_ms: outcome.durationMs,
    error: outcome.error,
    reported,
  };
}

function deliveryLine(delivery: DeliveryMessage, outcome: ForwardOutcome, forwardedAt: string, reported: boolean): string {
  const url = new URL(outcome.url);
  const status = outcome.status === null ? 'ERR' : String(outcome.status);
  const parts = [time(forwardedAt), status.padEnd(3), `POST ${url.pathname}${url.search}`, `${Math.round(outcome.durationMs)} ms`, delivery.event.id];
  if (outcome.error) parts.push(outcome.error);
  if (!reported) parts.push('(connection lost before the result was sent; the relay will offer it again)');
  return parts.join('  ');
}

export default defineCommand<[string], ListenOptions>({
  path: ['listen'],
  summary: 'Forward an endpoint\'s events to a local server as they arrive',
  description: [
    'Forward every event of an endpoint to a local server: a POST with the exact body bytes, the original headers and the signature headers, as the relay would deliver it. Prints the ingest URL and signing secret (stderr), then one line per delivery (stdout): time, status, path, duration, event id. With --json: a {"type":"ready",…} line, then one {"type":"delivery",…} line per delivery; connection changes go to stderr as {"type":"connection",…} lines.',
    '--endpoint takes an id or a name; a name no endpoint has is created (destination cli). Without --endpoint the endpoint is named cli-<hostname>. For an endpoint with a cli destination the local server\'s answers decide the event\'s status (2xx delivered, anything else retried on the relay\'s schedule); for a URL destination the events are mirrored here and the answers are not recorded.',
    'Events that arrived while nothing listened are forwarded first, oldest first (--skip-missed leaves them). A lost connection is noticed within seconds (heartbeats) and re-opened with backoff; deliveries missed meanwhile follow. If the relay is down at start, hook listen waits for it. Ctrl-C stops (exit 0). Docs: docs/cli.md#hook-listen',
  ].join('\n\n'),
  examples: [
    ['hook listen 3000', 'forward events to http://127.0.0.1:3000/'],
    ['hook listen 3000 --endpoint stripe --path /webhooks/stripe', 'one endpoint (created if new) to one route'],
    ['hook listen http://localhost:8000/hooks --skip-missed', 'only events that arrive from now on'],
    ['hook listen 3000 --json | jq -c \'select(.type == "delivery")\'', 'JSON lines, for scripts'],
  ],
  configure(command) {
    command
      .argument('<port|url>', 'a local port (forwards to http://127.0.0.1:<port>) or a URL')
      .option('--endpoint <endpoint>', 'endpoint id or name; a new name is created (default: cli-<hostname>)')
      .option('--path <path>', 'path on the local server to forward to (replaces the URL\'s path)')
      .option('--skip-missed', 'do not forward events that arrived before hook listen started')
      .option('--max-in-flight <n>', `deliveries forwarded at once, 1–${STREAM_MAX_IN_FLIGHT_LIMIT} (default: the relay's, 32)`, parseMaxInFlight);
  },
  async run(context, [targetArgument], options) {
    const { out } = context;
    const target = parseForwardTarget(targetArgument, options.path);
    const client = await context.client();
    const apiKey = context.settings.apiKey!;
    const apiUrl = client.apiUrl;
    const inFlight = new Map<string, AbortController>();
    const stop = stopSignal(() => {
      for (const controller of inFlight.values()) controller.abort();
    });
    const forwarder = new LocalForwarder(target);
    let stream: HookStream | undefined;
    try {
      const ref = options.endpoint ?? defaultEndpointName();
      const found = await untilRelayAnswers(out, apiUrl, async () => {
        const { endpoint, created } = await endpointToListenOn(client, ref);
        // The session serves the endpoint's first cli destination, which signs with its own secret.
        const served = endpoint.destinations.find((destination) => destination.destination.type === 'cli');
        const secret: SigningSecret = served ? await client.destinations.secret(served.id) : await client.endpoints.secret(endpoint.id);
        return { endpoint, created, secret, served };
      }, stop);
      if (!found) return 0;
      const { endpoint, created, secret, served } = found;
      const mirror = served === undefined;
      if (!out.json) {
        out.note(`Endpoint:    ${endpoint.name} (${endpoint.id})${created ? ', created now' : ''}`);
        out.note(`Ingest URL:  ${endpoint.url}`);
        out.note(`Secret:      ${secret.secret}`);
        out.note(`Forward to:  ${describeTarget(target)}`);
        if (mirror) out.note(`Note: this endpoint delivers only to URLs (${endpoint.destinations.map((destination) => targetText(destination.destination)).join(', ')}); events are mirrored here and answers are not recorded.`);
        if (endpoint.status !== 'active') out.warn(`The endpoint is ${endpoint.status}: ${endpoint.status === 'paused' ? 'events are held until it is resumed' : 'it refuses new events'}.`);
      }

      stream = new HookStream({
        apiUrl,
        apiKey,
        mode: 'listen',
        endpointId: endpoint.id,
        skipMissed: options.skipMissed ?? false,
        maxInFlight: options.maxInFlight,
        userAgent: `hook-cli/${packageJson.version}`,
      });
      const live = stream;
      let announced = false;
      live.on('state', (state) => {
        if (state.state === 'open' && !announced) {
          announced = true;
          if (out.json) {
            out.record(
              { type: 'ready', endpoint, created, ingest_url: endpoint.url, secret: secret.secret, forward_to: describeTarget(target), mirror, session_id: state.hello.session_id },
              '',
            );
          }
        }
        reportStreamState(out, state, { apiUrl, connectedText: `Connected. Forwarding events to ${describeTarget(target)} (Ctrl-C to stop).` });
      });
      live.on('message', (message) => {
        if (message.type !== 'delivery' || stop.isStopped()) return;
        const controller = new AbortController();
        inFlight.set(message.delivery_id, controller);
        const forwardedAt = new Date().toISOString();
        void forwarder.forward(message, controller.signal).then((outcome) => {
          inFlight.delete(message.delivery_id);
          // Abandoned at shutdown: left unanswered, so the relay offers it again.
          if (controller.signal.aborted) return;
          const reported = live.sendResult({
            delivery_id: message.delivery_id,
            status: outcome.status,
            duration_ms: outcome.durationMs,
            error: outcome.error,
            response_body: outcome.responseBody,
          });
          out.record(deliveryRecord(message, outcome, forwardedAt, reported), deliveryLine(message, outcome, forwardedAt, reported));
        });
      });
      live.start();

      const ending = await Promise.race([stop.stopped.then(() => 'stopped' as const), live.done]);
      if (ending !== 'stopped') {
        for (const controller of inFlight.values()) controller.abort();
        // A fatal refusal (bad key, endpoint gone): the relay's problem, exit 1.
        throw ending ?? new Error('the stream closed without a reason');
      }
      if (inFlight.size > 0) {
        noteConnection(out, { state: 'stopping', in_flight: inFlight.size }, `Stopping: waiting up to ${STOP_GRACE_MS / 1000} s for ${inFlight.size} delivery(ies) in flight (Ctrl-C again to abandon them)…`);
        const deadline = Date.now() + STOP_GRACE_MS;
        while (inFlight.size > 0 && Date.now() < deadline && ![...inFlight.values()].every((controller) => controller.signal.aborted)) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        if (inFlight.size > 0) {
          noteConnection(out, { state: 'stopping', abandoned: inFlight.size }, `Abandoned ${inFlight.size} delivery(ies); the relay offers them again to the next listener.`);
          for (const controller of inFlight.values()) controller.abort();
        }
      }
      return 0;
    } finally {
      await stream?.close();
      await forwarder.close();
      stop.dispose();
      if (stream && stop.isStopped()) noteConnection(out, { state: 'closed' }, 'Stopped.');
    }
  },
});
