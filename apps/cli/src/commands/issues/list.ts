import { Option } from 'commander';
import { countOf, ISSUE_KINDS, type IssueKind } from '@hook/core';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { destinationNames, issueTable } from '../../issue-views.ts';
import { parseDestinationId, parseIssueStatusList, parseLimit } from '../../option-parsers.ts';

interface ListOptions {
  /** Statuses, comma-separated (`all` already expanded); unset: the relay's default, open and acknowledged. */
  status?: string;
  endpoint?: string;
  destination?: string;
  kind?: IssueKind;
  limit?: number;
  cursor?: string;
}

export default defineCommand<[], ListOptions>({
  path: ['issues', 'list'],
  summary: 'List issues: failed deliveries grouped by destination and kind of failure',
  description:
    'List issues, most recently seen first (GET /v1/issues). An issue groups every failed attempt to one destination with one kind of failure ' +
    '(the receiver answered 5xx, timed out, refused the connection, …): how many events it covers, how many attempts failed, and when it was last seen. ' +
    'Open and acknowledged ones unless --status says otherwise. `hook issues get <issue>` shows one with its events; `hook issues retry <issue>` tries them all again once the receiver is fixed.\n' +
    '--json prints the page: {"data": [issue, …], "next_cursor": string | null}.',
  examples: [
    ['hook issues list', 'what is failing now (open and acknowledged issues)'],
    ['hook issues list --status all --endpoint orders', 'every issue of one endpoint, resolved ones too'],
    ['hook issues list --kind timeout --json', 'destinations that time out, as JSON'],
  ],
  configure(command) {
    command
      .option('--status <status[,status…]>', 'only issues in these statuses: open, acknowledged, resolved, several separated by commas, or all (default open,acknowledged)', parseIssueStatusList)
      .option('--endpoint <endpoint>', 'only this endpoint\'s issues (id or name)')
      .option('--destination <destination>', 'only this destination\'s issues (dst_…)', parseDestinationId)
      .addOption(new Option('--kind <kind>', 'only issues of this kind of failure').choices(ISSUE_KINDS))
      .option('--limit <n>', 'issues per page, 1–100 (default 20)', parseLimit)
      .option('--cursor <cursor>', 'the next_cursor of the previous page');
  },
  async run(context, _args, options) {
    const client = await context.client();
    const endpointId = options.endpoint === undefined ? undefined : await endpointIdOf(client, options.endpoint);
    const page = await client.issues
      .list({ status: options.status, endpoint_id: endpointId, destination_id: options.destination, kind: options.kind, limit: options.limit, cursor: options.cursor })
      .catch((error: unknown) => {
        throw options.endpoint === undefined ? error : endpointErrorFor(options.endpoint, error);
      });
    // People know destinations by their endpoint's name and URL (one more request; --json prints the page as it is).
    const names = context.out.json || page.data.length === 0 ? new Map<string, string>() : await destinationNames(client);
    await context.out.result(page, [issueTable(page.data, names)]);
    const first = page.data[0];
    if (first) context.out.hint(`${countOf(page.data.length, 'issue')}. See one with its events: hook issues get ${first.id}`);
    if (page.next_cursor) {
      const filters = [
        options.status && `--status ${options.status}`,
        options.endpoint && `--endpoint ${options.endpoint}`,
        options.destination && `--destination ${options.destination}`,
        options.kind && `--kind ${options.kind}`,
        options.limit && `--limit ${options.limit}`,
      ].filter(Boolean);
      context.out.hint(`More: hook issues list ${[...filters, `--cursor ${page.next_cursor}`].join(' ')}`);
    }
  },
});
