import { Option } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT_STATUSES, type EventStatus } from '@hook/core';
import type { Event, EventListQuery, EventSummary, HookClient } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { UserError, WAIT_TIMED_OUT } from '../../errors.ts';
import { describePassingFailure, isPassingFailure, parseSince, parseTimeout, pollEvents, snapshotStart, type SinceStart, type WaitStart } from '../../event-wait.ts';

interface WaitOptions {
  endpoint?: string;
  type?: string;
  status?: EventStatus;
  since?: SinceStart;
  /** Milliseconds; unset: DEFAULT_TIMEOUT (applied in run, so the help states the default once, in its own words). */
  timeout?: number;
}

/** How often the event list is read. */
const POLL_INTERVAL_MS = 500;
/** Longest wait for one answer of the relay: a relay that hangs cannot hold the command past its deadline by more. */
const REQUEST_TIMEOUT_MS = 5_000;
/** How long past the deadline a look that was under way may still finish (and match): the last look is made at the deadline. */
const LAST_ANSWER_GRACE_MS = 1_000;
const DEFAULT_TIMEOUT = '30s';

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** `endpoint orders, type push, status delivered`: what was waited for, in words. */
function filterWords(options: WaitOptions): string {
  const parts = [options.endpoint && `endpoint ${options.endpoint}`, options.type && `type ${options.type}`, options.status && `status ${options.status}`].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** `work`'s value, or `{ late: true }` when `deadlineMs` comes first. */
function beforeDeadline<T>(work: Promise<T>, deadlineMs: number): Promise<{ late: false; value: T } | { late: true }> {
  const controller = new AbortController();
  const deadline = sleep(Math.max(0, deadlineMs - Date.now()), { late: true } as const, { signal: controller.signal }).catch(() => ({ late: true }) as const);
  // Left behind at the deadline, its failure no longer matters.
  work.catch(() => undefined);
  return Promise.race([work.then((value) => ({ late: false, value }) as const), deadline]).finally(() => controller.abort());
}

export default defineCommand<[], WaitOptions>({
  path: ['events', 'wait'],
  summary: 'Wait for an event to arrive (or reach a status), for scripts and CI',
  description: [
    'Wait until an event matching the filters arrives (and, with --status, reaches that status), then print it as JSON on stdout ' +
      '(the whole event, as `hook events get <id> --json` prints it) and exit 0. Exit 1 with `wait_timed_out` when none matched within --timeout.',
    'Only events received after the wait began count, unless --since says from when (a time, or an event id: that event and later ones). ' +
      'With --status, the first such event to reach that status is the one printed.',
    'A relay that stops answering (a restart) is polled again until the timeout; stderr says so.',
    'Docs: docs/cli.md#hook-events-wait',
  ].join('\n\n'),
  examples: [
    ['hook events wait --endpoint orders --timeout 30s', 'the next event to arrive at orders'],
    ['hook events wait --endpoint orders --type invoice.paid --status delivered --timeout 2m', 'the next invoice.paid, once delivered'],
    ['hook events wait --since evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --status delivered', 'that event (or a later one) delivered'],
  ],
  configure(command) {
    command
      .option('--endpoint <endpoint>', 'only this endpoint\'s events (id or name)')
      .option('--type <type>', 'only events of this exact type')
      .addOption(new Option('--status <status>', 'wait until the event has this status').choices(EVENT_STATUSES))
      .option('--since <time|event>', 'count events from this time (ISO 8601, a date, or 10m ago) or this event id on, not only new ones', parseSince())
      .option('--timeout <duration>', `give up after this long: 30s, 2m, 500ms, or plain seconds (default ${DEFAULT_TIMEOUT})`, parseTimeout); // no commander default: it would print "(default: 30000)" beside this one
  },
  async run(context, _args, options) {
    const { out } = context;
    const startedAt = Date.now();
    const timeout = options.timeout ?? parseTimeout(DEFAULT_TIMEOUT);
    const deadline = startedAt + timeout;
    const client: HookClient = await context.client({ responseTimeoutMs: REQUEST_TIMEOUT_MS });
    const fromRelay = (error: unknown): unknown => (options.endpoint === undefined ? error : endpointErrorFor(options.endpoint, error));
    /** The list's filters, once the endpoint's name is looked up (in the loop: the relay may be down when the wait begins). */
    let query: Omit<EventListQuery, 'limit' | 'cursor'> | undefined = options.endpoint === undefined ? { type: options.type } : undefined;
    const from = options.since === undefined ? 'received from now on' : options.since.kind === 'event' ? `from ${options.since.id} on` : `received since ${options.since.at}`;

    let start: WaitStart | undefined = options.since;
    let announced = false;
    let newest: EventSummary | undefined;
    /** Since when, and why, the relay has not answered; undefined while it answers. */
    let silent: { sinceMs: number; reason: string } | undefined;
    for (;;) {
      const askedAt = Date.now();
      try {
        const answer = await beforeDeadline((async () => {
          query ??= { endpoint_id: await endpointIdOf(client, options.endpoint!), type: options.type };
          if (start === undefined) {
            start = await snapshotStart(client, query);
            return undefined;
          }
          const poll = await pollEvents(client, query, start, options.status);
          newest = poll.newest ?? newest;
          if (poll.match === undefined) return undefined;
          const event: Event = await client.events.get(poll.match.id);
          // Its status may have moved on (a replay) between the list and now.
          return options.status === undefined || event.status === options.status ? event : undefined;
        })(), Math.max(deadline, askedAt) + LAST_ANSWER_GRACE_MS);
        if (answer.late) {
          silent ??= { sinceMs: askedAt, reason: 'no answer yet' };
          break;
        }
        const found = answer.value;
        if (!announced && start !== undefined) {
          // Said once counting has begun: a script may send its event after this line.
          out.note(`Waiting up to ${seconds(timeout)} for an event${filterWords(options)} ${from}.`);
          announced = true;
        }
        if (silent !== undefined) {
          out.note(`The relay answers again (it did not for ${seconds(Date.now() - silent.sinceMs)}); still waiting.`);
          silent = undefined;
        }
        if (found !== undefined) {
          out.hint(`${found.id} matched after ${seconds(Date.now() - startedAt)}: ${found.type ?? 'no type'}, ${found.status}.`);
          // The event as JSON on stdout in every output mode: a script reads it either way.
          // A body block: a terminal shows the start of a big one, and how to get all of it.
          await out.result(found, [{ kind: 'body', text: JSON.stringify(found, null, 2), json: false, whole: `\`hook events get ${found.id} --json > event.json\` writes all of it` }]);
          return 0;
        }
      } catch (error) {
        if (!isPassingFailure(error)) throw fromRelay(error);
        if (silent === undefined) {
          silent = { sinceMs: Date.now(), reason: describePassingFailure(error) };
          out.note(`The relay is not answering (${silent.reason}); trying again until the timeout.`);
        }
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      await sleep(Math.min(POLL_INTERVAL_MS, remaining));
    }

    const waited = `No matching event${filterWords(options)} within ${seconds(timeout)}`;
    const why = silent !== undefined
      ? `: the relay has not answered for the last ${seconds(Date.now() - silent.sinceMs)} (${silent.reason})`
      : start === undefined
        ? ''
        : newest !== undefined && options.status !== undefined
          ? `: ${newest.id} arrived${newest.type ? ` (${newest.type})` : ''} but is ${newest.status}`
          : options.since === undefined
            ? ': nothing arrived after the wait began'
            : '';
    throw new UserError(WAIT_TIMED_OUT, `${waited}${why}`);
  },
});
