import { defineCommand } from '../../command.ts';
import { destinationNames, issueEventTable, issueView } from '../../issue-views.ts';
import { parseIssueId, parseLimit } from '../../option-parsers.ts';

interface GetOptions {
  limit?: number;
  cursor?: string;
}

export default defineCommand<[string], GetOptions>({
  path: ['issues', 'get'],
  summary: 'Show an issue and the events it covers',
  description:
    'Show an issue (GET /v1/issues/{id}): its status, what the destination answered, counts, when it was first and last seen, where its events stand now, ' +
    'then the events it covers, newest failure first, each with its delivery to the issue\'s destination (GET /v1/issues/{id}/events). ' +
    '`hook events get <event>` shows one event\'s attempts.\n' +
    '--json prints {"issue": issue, "events": {"data": [event, …], "next_cursor": string | null}}.',
  examples: [
    ['hook issues get iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'the issue and its latest 20 events'],
    ['hook issues get iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --limit 100 --json | jq -r \'.events.data[].event_id\'', 'the ids of the events it covers'],
  ],
  configure(command) {
    command
      .argument('<issue>', 'issue id (iss_…)', parseIssueId)
      .option('--limit <n>', 'events per page, 1–100 (default 20)', parseLimit)
      .option('--cursor <cursor>', 'the events\' next_cursor of the previous page');
  },
  async run(context, [id], options) {
    const client = await context.client();
    const [issue, events] = await Promise.all([client.issues.get(id), client.issues.events(id, { limit: options.limit, cursor: options.cursor })]);
    const names = context.out.json ? new Map<string, string>() : await destinationNames(client);
    await context.out.result({ issue, events }, [
      ...issueView(issue, names),
      { kind: 'heading', text: 'Events (newest failure first)' },
      issueEventTable(events.data),
    ]);
    if (events.next_cursor) {
      context.out.hint(`More events: hook issues get ${id}${options.limit ? ` --limit ${options.limit}` : ''} --cursor ${events.next_cursor}`);
    }
    if (issue.status !== 'resolved' && issue.events.failing + issue.events.pending > 0) {
      context.out.hint(`Once the receiver is fixed: hook issues retry ${id} --wait`);
    }
  },
});
