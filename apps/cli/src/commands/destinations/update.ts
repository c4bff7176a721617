import { Option } from 'commander';
import { ENDPOINT_STATUSES, type EndpointStatus } from '@hook/core';
import type { DestinationUpdate } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { rulesFromFlags } from '../../endpoint-rules.ts';
import { UsageError } from '../../errors.ts';
import { parseDestinationId, parseHttpUrl, parseLimitOrNone } from '../../option-parsers.ts';
import { destinationView } from '../../views.ts';

interface UpdateOptions {
  url?: string;
  cli?: boolean;
  status?: EndpointStatus;
  rate?: number | 'none';
  maxInFlight?: number | 'none';
  transformationFile?: string;
  clearTransformation?: boolean;
  filterFile?: string;
  filter?: string;
  clearFilter?: boolean;
}

export default defineCommand<[string], UpdateOptions>({
  path: ['destinations', 'update'],
  summary: 'Change where a destination sends, pause or resume it, or change its limits and rules',
  description:
    'Change a destination (PATCH /v1/destinations/{id}); what is not given stays as it is.\n' +
    'Paused: its deliveries wait. Disabled: it gets none (the relay also disables a destination that answered 410 or kept failing). ' +
    'Made active again, its waiting deliveries are due at once.',
  examples: [
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --status paused', 'hold its deliveries'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --status active', 'deliver again, waiting deliveries first'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --url https://example.com/v2/hooks', 'send to another URL'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --rate 10 --max-in-flight none', 'at most 10 per second; the relay\'s share in flight'],
  ],
  configure(command) {
    command
      .argument('<destination>', 'destination id (dst_…)', parseDestinationId)
      .addOption(new Option('--url <url>', 'deliver to this http(s) URL').argParser(parseHttpUrl).conflicts('cli'))
      .addOption(new Option('--cli', 'hold events for `hook listen` instead'))
      .addOption(new Option('--status <status>', 'active delivers; paused holds deliveries; disabled stops them').choices(ENDPOINT_STATUSES))
      .option('--rate <n>', 'start at most n deliveries per second; none removes the limit', parseLimitOrNone)
      .option('--max-in-flight <n>', 'at most n deliveries in flight at once; none: the relay\'s share', parseLimitOrNone)
      .addOption(new Option('--transformation-file <path>', 'set its transformation: JavaScript in this file (at most 64 KiB)').conflicts('clearTransformation'))
      .addOption(new Option('--clear-transformation', 'remove its transformation'))
      .addOption(new Option('--filter-file <path>', 'set its filter: JSON in this file').conflicts(['filter', 'clearFilter']))
      .addOption(new Option('--filter <json>', 'set its filter: JSON given inline').conflicts('clearFilter'))
      .addOption(new Option('--clear-filter', 'remove its filter: deliver every event here'));
  },
  async run(context, [id], options) {
    const changes: DestinationUpdate = {};
    if (options.url !== undefined) changes.destination = { type: 'url', url: options.url };
    if (options.cli) changes.destination = { type: 'cli' };
    if (options.status !== undefined) changes.status = options.status;
    if (options.rate !== undefined) changes.rate_per_second = options.rate === 'none' ? null : options.rate;
    if (options.maxInFlight !== undefined) changes.max_in_flight = options.maxInFlight === 'none' ? null : options.maxInFlight;
    Object.assign(changes, await rulesFromFlags(options));
    if (Object.keys(changes).length === 0) {
      throw new UsageError(
        'Nothing to change',
        'Pass --url <url>, --cli, --status, --rate, --max-in-flight, --transformation-file, --clear-transformation, --filter, --filter-file or --clear-filter.',
      );
    }
    const client = await context.client();
    const destination = await client.destinations.update(id, changes);
    await context.out.result(destination, destinationView(destination));
  },
});
