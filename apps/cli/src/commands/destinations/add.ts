import { Option } from 'commander';
import type { DestinationCreate } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { rulesFromFlags } from '../../endpoint-rules.ts';
import { UsageError } from '../../errors.ts';
import { parseHttpUrl, parsePositiveWholeNumber } from '../../option-parsers.ts';
import { destinationView } from '../../views.ts';

interface AddOptions {
  url?: string;
  cli?: boolean;
  rate?: number;
  maxInFlight?: number;
  transformationFile?: string;
  filterFile?: string;
  filter?: string;
}

export default defineCommand<[string], AddOptions>({
  path: ['destinations', 'add'],
  summary: 'Add a destination to an endpoint: its events from now on go there too',
  description:
    'Add a destination to an endpoint (POST /v1/endpoints/{id}/destinations, at most 10 per endpoint). Every event the endpoint receives from now on is delivered to each of its destinations, ' +
    'each signed with its own secret (`hook destinations secret`), with its own retries, status and health. Events received before stay where they went.\n' +
    'A transformation (JavaScript, docs/transformations.md) and a filter (JSON, docs/filters.md) apply to this destination only.',
  examples: [
    ['hook destinations add orders --url https://example.com/webhooks', 'also deliver to a second server'],
    ['hook destinations add orders --cli', 'also hold events for `hook listen`'],
    ['hook destinations add orders --url https://slow.example.com/hooks --rate 5 --max-in-flight 2', 'a receiver that takes only so much'],
    ['hook destinations add orders --url https://example.com/paid --filter \'{"body":{"type":"order.paid"}}\'', 'only some events to this one'],
    ['hook destinations add orders --url https://example.com/hooks --json | jq -r .id', 'just the new id (dst_…)'],
  ],
  configure(command) {
    command
      .argument('<endpoint>', 'endpoint id (ep_…) or name')
      .addOption(new Option('--url <url>', 'deliver to this http(s) URL, signed, with retries').argParser(parseHttpUrl).conflicts('cli'))
      .addOption(new Option('--cli', 'hold events for `hook listen`'))
      .option('--rate <n>', 'start at most n deliveries per second (default: no limit)', parsePositiveWholeNumber)
      .option('--max-in-flight <n>', 'have at most n deliveries in flight at once (default: the relay\'s share)', parsePositiveWholeNumber)
      .option('--transformation-file <path>', 'reshape events for this destination with the JavaScript in this file (docs/transformations.md)')
      .addOption(new Option('--filter-file <path>', 'deliver here only events matching the JSON filter in this file (docs/filters.md)').conflicts('filter'))
      .option('--filter <json>', 'deliver here only events matching this JSON filter');
  },
  async run(context, [ref], options) {
    if (options.url === undefined && !options.cli) throw new UsageError('Say where the destination sends', 'Pass --url <url> to deliver to a server, or --cli to hold events for `hook listen`.');
    const body: DestinationCreate = { destination: options.url === undefined ? { type: 'cli' } : { type: 'url', url: options.url } };
    if (options.rate !== undefined) body.rate_per_second = options.rate;
    if (options.maxInFlight !== undefined) body.max_in_flight = options.maxInFlight;
    Object.assign(body, await rulesFromFlags(options));
    const client = await context.client();
    const endpointId = await endpointIdOf(client, ref);
    const destination = await client.destinations.create(endpointId, body).catch((error: unknown) => {
      throw endpointErrorFor(ref, error);
    });
    await context.out.result(destination, destinationView(destination));
    context.out.hint(`Its receiver verifies deliveries with its own secret: hook destinations secret ${destination.id}`);
  },
});
