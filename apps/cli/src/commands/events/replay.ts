import { Option } from 'commander';
import { isSuccessStatus } from '@hook/core';
import type { Attempt, ReplayedEvent } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { REPLAY_FAILED, replayFailedFix, UsageError, UserError } from '../../errors.ts';
import { parseDestinationId, parseStatusList, parseTimeArgument } from '../../option-parsers.ts';
import { attemptTable, targetText, time } from '../../views.ts';

interface ReplayOptions {
  destination?: string;
  endpoint?: string;
  all?: boolean;
  /** One status or several, comma-separated; unset: the relay's default, failed and retrying. */
  status?: string;
  since?: string;
  until?: string;
}

/** What the replay did for one destination: a line for people, and whether it counts as a failed replay. */
interface ReplayLine {
  text: string;
  /** The attempt a URL destination got. */
  attempt?: Attempt;
  failed: boolean;
}

/** One line per destination the replay went to; only a URL attempt without a 2xx is a failure (cli destinations answer later, in `hook listen`). */
function replayLines(event: ReplayedEvent): ReplayLine[] {
  return event.replay.map(({ destination_id: destinationId, outcome }) => {
    const delivery = event.deliveries.find((item) => item.destination_id === destinationId);
    const to = `${event.id} to ${destinationId} (${delivery ? targetText(delivery.destination) : 'deleted'})`;
    if (outcome === 'waiting_for_listener') return { text: `Replayed ${to}: waiting for the next \`hook listen\``, failed: false };
    if (outcome === 'sent_to_listener') return { text: `Replayed ${to}: sent to the listener now`, failed: false };
    if (outcome === 'in_flight') return { text: `Not replayed ${to}: an attempt is in flight now`, failed: false };
    const attempt = event.attempts.findLast((item) => item.destination_id === destinationId);
    if (!attempt) return { text: `Replayed ${to}; status ${delivery?.status ?? event.status}`, failed: true };
    const result = attempt.response_status === null ? `no answer (${attempt.error ?? 'unknown error'})` : `answered ${attempt.response_status}`;
    // The delivery's status is not the event's when another of its deliveries is elsewhere (docs/delivery.md#event-status).
    const eventStatus = delivery && delivery.status !== event.status ? `; the event is ${event.status}` : '';
    return {
      text: `Replayed ${to}: attempt #${attempt.n} ${result} in ${attempt.duration_ms} ms; status now ${delivery?.status ?? event.status}${eventStatus}`,
      attempt,
      failed: !isSuccessStatus(attempt.response_status),
    };
  });
}

export default defineCommand<[string | undefined], ReplayOptions>({
  path: ['events', 'replay'],
  summary: 'Replay one event now, or queue a replay of many (--endpoint, --destination or --all)',
  description:
    'With an event id: one new attempt for each of its destinations (or only --destination). URL destinations get it now; ' +
    '`hook listen` (cli) destinations get it in the running listener, or the next one that connects. One line per destination says which; ' +
    'exits 1 when a URL attempt does not get a 2xx.\n' +
    'With --endpoint, --destination or --all (and no event id): queues one attempt for each matching delivery (default: the failing ones, status failed or retrying) and says how many, and which statuses it took; ' +
    'the delivery workers and listeners make them soon after, oldest first.',
  examples: [
    ['hook events replay evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'deliver one event again to each destination, now'],
    ['hook events replay evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --destination dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'only to one destination'],
    ['hook events replay --endpoint orders', 'every failing event of one endpoint (failed or retrying)'],
    ['hook events replay --destination dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --since 2h', 'what failed to one destination in the last two hours'],
    ['hook events replay --endpoint orders --status delivered --since 2h', 'everything delivered in the last two hours'],
    ['hook events replay --all --status failed --since 2026-01-31 --until 2026-02-01', 'every event of every endpoint received that day whose retries ran out'],
  ],
  configure(command) {
    command
      .argument('[event]', 'event id (evt_…) to replay now')
      .option('--destination <destination>', 'only the deliveries to this destination (dst_…)', parseDestinationId)
      .addOption(new Option('--endpoint <endpoint>', 'replay this endpoint\'s events (id or name)').conflicts('all'))
      .option('--all', 'replay matching events of every endpoint')
      .option('--status <status[,status…]>', 'only deliveries in these statuses, comma-separated (default failed,retrying)', parseStatusList)
      .option('--since <time>', 'only events received at or after: ISO time, date, or a duration ago (30m, 2h, 7d)', parseTimeArgument())
      .option('--until <time>', 'only events received before: ISO time, date, or a duration ago', parseTimeArgument());
  },
  async run(context, [eventId], options) {
    const bulk = options.endpoint !== undefined || options.all === true;
    const filters = options.status !== undefined || options.since !== undefined || options.until !== undefined;
    if (eventId !== undefined && (bulk || filters)) {
      throw new UsageError('An event id cannot go with --endpoint, --all, --status, --since or --until', 'Replay one event by id (optionally --destination), or many with --endpoint <endpoint>, --destination or --all and filters.');
    }
    if (eventId === undefined && !bulk && options.destination === undefined) {
      throw new UsageError('Say which events to replay', 'Pass an event id, or --endpoint <endpoint>, --destination <dst_…> or --all to replay many.');
    }
    const client = await context.client();
    const { out } = context;
    if (eventId !== undefined) {
      const event = await client.events.replay(eventId, { destination_id: options.destination });
      const lines = replayLines(event);
      const attempts = lines.flatMap((line) => (line.attempt ? [line.attempt] : []));
      await out.result(event, [{ kind: 'text', text: lines.map((line) => line.text).join('\n') }, ...(attempts.length > 0 ? [attemptTable(attempts)] : [])]);
      const failed = lines.filter((line) => line.failed);
      if (failed.length > 0) throw new UserError(REPLAY_FAILED, failed.map((line) => line.text.replace(/^Replayed/, 'The replay of')).join('; '), replayFailedFix(event.id));
      return;
    }
    const endpointId = options.endpoint === undefined ? undefined : await endpointIdOf(client, options.endpoint);
    const result = await client.events
      .replayMany({ endpoint_id: endpointId, destination_id: options.destination, status: options.status, since: options.since, until: options.until })
      .catch((error: unknown) => {
        throw options.endpoint === undefined ? error : endpointErrorFor(options.endpoint, error);
      });
    const scope = [
      `status ${result.status.join(' or ')}`,
      options.endpoint === undefined ? (options.destination === undefined ? 'every endpoint' : undefined) : `endpoint ${options.endpoint}`,
      options.destination && `destination ${options.destination}`,
      options.since && `since ${time(options.since)}`,
      options.until && `until ${time(options.until)}`,
    ].filter(Boolean).join(', ');
    const events = `${result.replayed} event${result.replayed === 1 ? '' : 's'}`;
    const deliveries = `${result.deliveries} deliver${result.deliveries === 1 ? 'y' : 'ies'}`;
    await out.result(result, [{ kind: 'text', text: `Queued ${events} (${deliveries}, ${result.waiting_for_listener} for \`hook listen\`) for replay (${scope}).` }]);
    if (result.deliveries >= result.limit) out.warn(`That is the most one request queues (${result.limit} deliveries); more may match. Run it again once these have been attempted, or narrow --since/--until.`);
    else if (result.replayed > 0) out.hint(`Follow them with: hook events list${options.endpoint ? ` --endpoint ${options.endpoint}` : ''}`);
  },
});
