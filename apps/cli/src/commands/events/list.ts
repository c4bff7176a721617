import { EVENT_LIST_WINDOW, LIST_LIMIT_DEFAULT } from '@hook/core';
import { FILL_PAGE_BUDGET_MS } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { parseLimit, parseStatusList } from '../../option-parsers.ts';
import { eventTable } from '../../views.ts';

interface ListOptions {
  endpoint?: string;
  /** One status or several, comma-separated (`failed,retrying`). */
  status?: string;
  type?: string;
  limit?: number;
  cursor?: string;
}

export default defineCommand<[], ListOptions>({
  path: ['events', 'list'],
  summary: 'List events, newest first (without bodies)',
  description:
    'List events, newest first, without their bodies (`hook events get <id>` shows one whole).\n' +
    'LAST is the answer to each event\'s last attempt: its HTTP status, or why none came (timeout, network_error, transformation_failed), or - before any; for an event retrying or failed, its last failed attempt (--json: last_attempt).\n' +
    `With filters, the relay looks through at most ${EVENT_LIST_WINDOW.toLocaleString('en')} events a request; this follows its cursor until it has --limit events or reaches the oldest (for at most ${FILL_PAGE_BUDGET_MS / 1000} s, then it shows what it found and how to go on).\n` +
    '--json prints the page: {"data": [event, …], "next_cursor": string | null}.',
  examples: [
    ['hook events list', 'the newest 20 events of every endpoint'],
    ['hook events list --endpoint orders --status failed,retrying', 'what is failing on one endpoint (failed for good, or retrying)'],
    ['hook events list --type invoice.paid --limit 100 --json', 'one type, as JSON'],
  ],
  configure(command) {
    command
      .option('--endpoint <endpoint>', 'only this endpoint\'s events (id or name)')
      .option('--status <status[,status…]>', 'only events in these statuses: pending, delivered, retrying (failed, retrying soon), failed (no retries left), filtered; several separated by commas', parseStatusList)
      .option('--type <type>', 'only events of this exact type')
      .option('--limit <n>', 'events per page, 1–100 (default 20)', parseLimit)
      .option('--cursor <cursor>', 'the next_cursor of the previous page');
  },
  async run(context, _args, options) {
    const client = await context.client();
    const endpointId = options.endpoint === undefined ? undefined : await endpointIdOf(client, options.endpoint);
    // A filtered page of the relay may be short, even empty, with a cursor on: fullPage follows it.
    const page = await client.events
      .fullPage({ endpoint_id: endpointId, status: options.status, type: options.type, limit: options.limit, cursor: options.cursor })
      .catch((error: unknown) => {
        throw options.endpoint === undefined ? error : endpointErrorFor(options.endpoint, error);
      });
    // People know their endpoints by name: read them for the table (one more request; --json prints the page as it is).
    const names = new Map<string, string>();
    if (!context.out.json && page.data.length > 0) {
      try {
        for await (const endpoint of client.endpoints.iterate()) names.set(endpoint.id, endpoint.name);
      } catch {
        // Ids, then: the events are what was asked for.
      }
    }
    await context.out.result(page, [eventTable(page.data, names)]);
    if (page.next_cursor && page.data.length < (options.limit ?? LIST_LIMIT_DEFAULT)) {
      context.out.hint(`Stopped looking after ${FILL_PAGE_BUDGET_MS / 1000} s; older events may match too.`);
    }
    if (page.next_cursor) {
      const filters = [
        options.endpoint && `--endpoint ${options.endpoint}`,
        options.status && `--status ${options.status}`,
        options.type && `--type ${JSON.stringify(options.type)}`,
        options.limit && `--limit ${options.limit}`,
      ].filter(Boolean);
      context.out.hint(`More: hook events list ${[...filters, `--cursor ${page.next_cursor}`].join(' ')}`);
    }
  },
});
