import { Option } from 'commander';
import { EVENT_STATUSES, type EventStatus } from '@hook/core';
import type { Event } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { REPLAY_FAILED, UsageError, UserError } from '../../errors.ts';
import { parseTimeArgument } from '../../option-parsers.ts';
import { attemptTable, time } from '../../views.ts';

interface ReplayOptions {
  endpoint?: string;
  all?: boolean;
  status?: EventStatus;
  since?: string;
  until?: string;
}

function isSuccess(event: Event): boolean {
  const status = event.attempts.at(-1)?.response_status;
  return status !== undefined && status !== null && status >= 200 && status < 300;
}

function attemptSummary(event: Event): string {
  const attempt = event.attempts.at(-1);
  if (!attempt) return `Replayed ${event.id}; status ${event.status}`;
  const result = attempt.response_status === null ? `no answer (${attempt.error ?? 'unknown error'})` : `answered ${attempt.response_status}`;
  return `Replayed ${event.id}: attempt #${attempt.n} ${result} in ${attempt.duration_ms} ms; status now ${event.status}`;
}

export default defineCommand<[string | undefined], ReplayOptions>({
  path: ['events', 'replay'],
  summary: 'Replay one event now, or queue a replay of many (--endpoint or --all)',
  description:
    'With an event id: one delivery attempt now, to the endpoint\'s destination; exits 1 when that attempt does not get a 2xx.\n' +
    'With --endpoint (or --all): queues one attempt for each matching event (default: status failed) and says how many; ' +
    'the delivery workers make them soon after, oldest first.',
  examples: [
    ['hook events replay evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'deliver one event again, now'],
    ['hook events replay --endpoint orders', 'every failed event of one endpoint'],
    ['hook events replay --endpoint orders --status delivered --since 2h', 'everything delivered in the last two hours'],
    ['hook events replay --all --since 2026-01-31 --until 2026-02-01', 'every failed event of every endpoint received that day'],
  ],
  configure(command) {
    command
      .argument('[event]', 'event id (evt_…) to replay now')
      .addOption(new Option('--endpoint <endpoint>', 'replay this endpoint\'s events (id or name)').conflicts('all'))
      .option('--all', 'replay matching events of every endpoint')
      .addOption(new Option('--status <status>', 'only events in this status (default failed)').choices(EVENT_STATUSES))
      .option('--since <time>', 'only events received at or after: ISO time, date, or a duration ago (30m, 2h, 7d)', parseTimeArgument())
      .option('--until <time>', 'only events received before: ISO time, date, or a duration ago', parseTimeArgument());
  },
  async run(context, [eventId], options) {
    const bulk = options.endpoint !== undefined || options.all === true;
    const filters = options.status !== undefined || options.since !== undefined || options.until !== undefined;
    if (eventId !== undefined && (bulk || filters)) {
      throw new UsageError('An event id cannot go with --endpoint, --all, --status, --since or --until', 'Replay one event by id, or many with --endpoint <endpoint> (or --all) and filters.');
    }
    if (eventId === undefined && !bulk) {
      throw new UsageError('Say which events to replay', 'Pass an event id, or --endpoint <endpoint> (or --all) to replay many.');
    }
    const client = await context.client();
    const { out } = context;
    if (eventId !== undefined) {
      const event = await client.events.replay(eventId);
      await out.result(event, [{ kind: 'text', text: attemptSummary(event) }, attemptTable(event.attempts.slice(-1))]);
      if (!isSuccess(event)) throw new UserError(REPLAY_FAILED, attemptSummary(event).replace(/^Replayed/, 'The replay of'));
      return;
    }
    const endpointId = options.endpoint === undefined ? undefined : await endpointIdOf(client, options.endpoint);
    const status = options.status ?? 'failed';
    const result = await client.events
      .replayMany({ endpoint_id: endpointId, status, since: options.since, until: options.until })
      .catch((error: unknown) => {
        throw options.endpoint === undefined ? error : endpointErrorFor(options.endpoint, error);
      });
    const scope = [
      `status ${status}`,
      options.endpoint === undefined ? 'every endpoint' : `endpoint ${options.endpoint}`,
      options.since && `since ${time(options.since)}`,
      options.until && `until ${time(options.until)}`,
    ].filter(Boolean).join(', ');
    await out.result(result, [{ kind: 'text', text: `Queued ${result.replayed} event${result.replayed === 1 ? '' : 's'} for replay (${scope}).` }]);
    if (result.replayed === result.limit) out.warn(`That is the most one request queues (${result.limit}); more may match. Run it again once these have been attempted, or narrow --since/--until.`);
    else if (result.replayed > 0) out.hint(`Follow them with: hook events list${options.endpoint ? ` --endpoint ${options.endpoint}` : ''}`);
  },
});
