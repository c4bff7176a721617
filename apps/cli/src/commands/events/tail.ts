import { Option } from 'commander';
import { EVENT_STATUSES, type AttemptFinishedMessage, type EventReceivedMessage, type EventStatus } from '@hook/core';
import { HookStream } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import type { Tone } from '../../output/view.ts';
import { noteConnection, reportStreamState, stopSignal, untilRelayAnswers } from '../../stream-connection.ts';
import type { LiveLines } from '../../ui/live-lines.ts';
import { bytes, time } from '../../views.ts';
import packageJson from '../../../package.json' with { type: 'json' };

interface TailOptions {
  endpoint?: string;
  status?: EventStatus;
}

const STATUS_TONES: Record<EventStatus, Tone> = { delivered: 'good', failed: 'bad', retrying: 'warn', pending: 'dim', filtered: 'dim' };

/** One line per message, for people: what happened, to which event, how it ended. */
function lineFor(message: EventReceivedMessage | AttemptFinishedMessage): { text: string; tone?: Tone } {
  if (message.type === 'event.received') {
    const { event } = message;
    const target = `${event.path || '/'}${event.query ? `?${event.query}` : ''}`;
    return { text: [time(event.received_at), 'received ', event.id, `${event.method} ${target}`, event.type ?? '-', bytes(event.size), event.endpoint_id].join('  ') };
  }
  const { attempt } = message;
  const answer = attempt.response_status === null ? `no answer: ${attempt.error ?? 'unknown error'}` : String(attempt.response_status);
  return {
    text: [time(attempt.started_at), message.event_status.padEnd(9), message.event_id, `attempt ${attempt.n} (${attempt.trigger})`, answer, `${Math.round(attempt.duration_ms)} ms`].join('  '),
    tone: STATUS_TONES[message.event_status],
  };
}

export default defineCommand<[], TailOptions>({
  path: ['events', 'tail'],
  summary: 'Watch events and delivery attempts as they happen',
  description: [
    'Print each event as it is received and each delivery attempt as it finishes, live, until Ctrl-C.',
    '--json prints the stream\'s messages as they arrive, one per line: {"type":"event.received",…} and {"type":"attempt.finished",…}. A lost connection is re-opened with backoff; what happened while it was down is not replayed (use `hook events list` for history). Docs: docs/cli.md#hook-events-tail',
  ].join('\n\n'),
  examples: [
    ['hook events tail', 'everything, for every endpoint'],
    ['hook events tail --endpoint orders --status failed', 'only attempts that left an event failed'],
    ['hook events tail --json | jq -c \'select(.type == "attempt.finished")\'', 'attempts as JSON lines'],
  ],
  configure(command) {
    command
      .option('--endpoint <endpoint>', 'only this endpoint (id or name)')
      .addOption(new Option('--status <status>', 'only events and attempts whose resulting status is this').choices(EVENT_STATUSES));
  },
  async run(context, _args, options) {
    const { out } = context;
    const client = await context.client();
    const apiUrl = client.apiUrl;
    const stop = stopSignal();
    let stream: HookStream | undefined;
    let live: LiveLines | undefined;
    try {
      let endpointId: string | undefined;
      if (options.endpoint !== undefined) {
        const ref = options.endpoint;
        endpointId = await untilRelayAnswers(out, apiUrl, () => endpointIdOf(client, ref), stop);
        if (endpointId === undefined) return 0;
      }
      if (!out.json && out.interactive) {
        const { renderLiveLines } = await import('../../ui/live-lines.ts');
        // The terminal's width: stdout is a TTY here (out.interactive).
        live = renderLiveLines({ write: (data) => out.bytes(data), columns: process.stdout.columns });
      }
      stream = new HookStream({
        apiUrl,
        apiKey: context.settings.apiKey!,
        mode: 'tail',
        endpointId,
        status: options.status,
        userAgent: `hook-cli/${packageJson.version}`,
      });
      const scope = options.endpoint ? `endpoint ${options.endpoint}` : 'every endpoint';
      stream.on('state', (state) =>
        reportStreamState(out, state, { apiUrl, connectedText: `Connected. Watching ${scope}${options.status ? ` (status ${options.status})` : ''}; Ctrl-C to stop.` }),
      );
      stream.on('message', (message) => {
        if (message.type !== 'event.received' && message.type !== 'attempt.finished') return;
        const line = lineFor(message);
        if (live) live.add(line);
        else out.record(message, line.text);
      });
      stream.start();
      const ending = await Promise.race([stop.stopped.then(() => 'stopped' as const), stream.done]);
      if (ending !== 'stopped') throw ending ?? new Error('the stream closed without a reason');
      return 0;
    } catch (error) {
      throw options.endpoint === undefined ? error : endpointErrorFor(options.endpoint, error);
    } finally {
      await stream?.close();
      await live?.close();
      stop.dispose();
      if (stream && stop.isStopped()) noteConnection(out, { state: 'closed' }, 'Stopped.');
    }
  },
});
