import { setTimeout as sleep } from 'node:timers/promises';
import type { Issue } from '@hook/client';
import { countOf } from '@hook/core';
import { defineCommand } from '../../command.ts';
import { REPLAY_FAILED, UserError, WAIT_TIMED_OUT } from '../../errors.ts';
import { parseTimeout } from '../../event-wait.ts';
import { progressText } from '../../issue-views.ts';
import { parseIssueId } from '../../option-parsers.ts';

interface RetryOptions {
  wait?: boolean;
  /** Milliseconds; unset: DEFAULT_TIMEOUT. */
  timeout?: number;
}

/** How often the issue is read while waiting: its counts are one indexed query on the relay. */
const POLL_INTERVAL_MS = 1_000;
/** Longest wait for one answer of the relay, so a relay that hangs cannot hold --wait far past --timeout. */
const REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_TIMEOUT = '2m';

/**
 * Whether the retry has run its course: every queued delivery got its attempt (none is
 * pending), or the relay resolved the issue (every covered event delivered).
 */
function settled(issue: Issue): boolean {
  return issue.status === 'resolved' || issue.events.pending === 0;
}

export default defineCommand<[string], RetryOptions>({
  path: ['issues', 'retry'],
  summary: 'Retry every event an issue covers (once the receiver is fixed), and optionally wait for the result',
  description: [
    'Queue one more attempt (trigger replay) of every event the issue covers that is not yet delivered to its destination, to that destination only (POST /v1/issues/{id}/retry). ' +
      'The delivery workers make them soon after; the relay resolves the issue by itself once every event it covers is delivered.',
    'With --wait, it then reads the issue every second and shows on stderr how many are delivered of how many, until no event waits for an attempt (or the issue is resolved). ' +
      'It exits 0 when none still fails, else 1 (replay_failed) naming the command that lists them; 1 (wait_timed_out) when --timeout comes first.',
    '--json prints {"issue": issue, "queued": n}; with --wait, the issue as it stands at the end.',
  ].join('\n\n'),
  examples: [
    ['hook issues retry iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'queue a retry of every failing event of the issue'],
    ['hook issues retry iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --wait --timeout 5m', 'and wait until each has had its attempt (exit 1 if some still fail)'],
  ],
  configure(command) {
    command
      .argument('<issue>', 'issue id (iss_…)', parseIssueId)
      .option('--wait', 'wait until every queued event has had its attempt, showing progress on stderr')
      .option('--timeout <duration>', `with --wait, give up after this long: 30s, 5m, or plain seconds (default ${DEFAULT_TIMEOUT})`, parseTimeout);
  },
  async run(context, [id], options) {
    const { out } = context;
    const client = await context.client(options.wait ? { responseTimeoutMs: REQUEST_TIMEOUT_MS } : {});
    const { issue: queuedIssue, queued } = await client.issues.retry(id);
    const queuedText = `Queued ${countOf(queued, 'event')} of ${id} for one more attempt to ${queuedIssue.destination_id}.`;
    if (!options.wait) {
      await out.result({ issue: queuedIssue, queued }, [{ kind: 'text', text: queuedText }]);
      if (queued > 0) out.hint(`Follow them with: hook issues get ${id}  (or run this again with --wait)`);
      return;
    }

    const timeout = options.timeout ?? parseTimeout(DEFAULT_TIMEOUT);
    const deadline = Date.now() + timeout;
    out.note(queuedText);
    let issue = queuedIssue;
    let shown = '';
    const show = (current: Issue) => {
      const text = `${id}: ${progressText(current.events)}`;
      // A terminal rewrites one status line; a pipe or file gets a line each time the counts change.
      if (!out.status(text) && text !== shown) out.note(text);
      shown = text;
    };
    show(issue);
    while (!settled(issue) && Date.now() < deadline) {
      await sleep(Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now())));
      issue = await client.issues.get(id);
      show(issue);
    }
    out.status(`${id}: ${progressText(issue.events)}`, { keep: true });

    await out.result({ issue, queued }, [{ kind: 'text', text: `${id} is ${issue.status}: ${progressText(issue.events)}.` }]);
    if (!settled(issue)) {
      throw new UserError(
        WAIT_TIMED_OUT,
        `${countOf(issue.events.pending, 'event')} of ${id} still wait for an attempt after ${timeout / 1000} s`,
        `They stay queued: \`hook issues get ${id}\` shows where each stands; next time wait longer (--timeout 5m).`,
      );
    }
    if (issue.status !== 'resolved' && issue.events.failing > 0) {
      throw new UserError(
        REPLAY_FAILED,
        `${countOf(issue.events.failing, 'event')} of ${id} still fail${issue.events.failing === 1 ? 's' : ''} to ${issue.destination_id} (${issue.title.toLowerCase()})`,
        `See them and what the destination answered with \`hook issues get ${id}\`; fix the receiver, then run \`hook issues retry ${id} --wait\` again.`,
      );
    }
    if (issue.status !== 'resolved') out.hint(`Every event is delivered; the relay resolves ${id} within seconds.`);
  },
});
