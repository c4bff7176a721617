import { Option } from 'commander';
import { ENDPOINT_STATUSES, type EndpointStatus } from '@hook/core';
import type { DestinationUpdate } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { addDestinationOptions, addTargetOptions, optionsFromFlags, stdinSecretReader, targetFromFlags, type OptionFlags, type TargetFlags } from '../../destination-flags.ts';
import { rulesFromFlags } from '../../endpoint-rules.ts';
import { UsageError } from '../../errors.ts';
import { parseDestinationId, parseLimitOrNone } from '../../option-parsers.ts';
import { destinationView } from '../../views.ts';

interface UpdateOptions extends TargetFlags, OptionFlags {
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
  summary: 'Change where a destination sends, pause or resume it, or change its limits, rules and options',
  description:
    'Change a destination (PATCH /v1/destinations/{id}); what is not given stays as it is.\n' +
    'Paused: its deliveries wait. Disabled: it gets none (the relay also disables a destination that answered 410 or kept failing). ' +
    'Made active again, its waiting deliveries are due at once.\n' +
    'A new target (--url, --cli, --amqp, --nats, --redis, --mqtt) replaces the old one whole. New auth replaces the old (--no-auth removes it); ' +
    '--no-tls, --no-ordering and --no-delay remove those. Changing --signature makes a new secret, the old one signing beside it for 24 hours. ' +
    'A secret on the command line shows in process lists and shell history: give - instead (--auth-bearer -, --oauth2-client-secret -, --auth-basic user:-) and pipe it in on stdin.',
  examples: [
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --status paused', 'hold its deliveries'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --status active', 'deliver again, waiting deliveries first'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --url https://example.com/v2/hooks', 'send to another URL'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --rate 10 --max-in-flight none', 'at most 10 per second; the relay\'s share in flight'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --auth-header \'X-Api-Key: -\' < key.txt', 'a static header, its value from a file'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --no-auth --no-ordering --no-delay', 'no sign-in, unordered, at once'],
    ['hook destinations update dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --on-give-up skip', 'an ordered destination goes on past an event that gave up'],
  ],
  configure(command) {
    command.argument('<destination>', 'destination id (dst_…)', parseDestinationId);
    addTargetOptions(command, 'send');
    command
      .addOption(new Option('--status <status>', 'active delivers; paused holds deliveries; disabled stops them').choices(ENDPOINT_STATUSES))
      .option('--rate <n>', 'start at most n deliveries per second; none removes the limit', parseLimitOrNone)
      .option('--max-in-flight <n>', 'at most n deliveries in flight at once; none: the relay\'s share', parseLimitOrNone)
      .addOption(new Option('--transformation-file <path>', 'set its transformation: JavaScript in this file (at most 64 KiB)').conflicts('clearTransformation'))
      .addOption(new Option('--clear-transformation', 'remove its transformation'))
      .addOption(new Option('--filter-file <path>', 'set its filter: JSON in this file').conflicts(['filter', 'clearFilter']))
      .addOption(new Option('--filter <json>', 'set its filter: JSON given inline').conflicts('clearFilter'))
      .addOption(new Option('--clear-filter', 'remove its filter: deliver every event here'));
    addDestinationOptions(command, true);
  },
  async run(context, [id], options) {
    const changes: DestinationUpdate = {};
    const destination = targetFromFlags(options);
    if (destination !== undefined) changes.destination = destination;
    if (options.status !== undefined) changes.status = options.status;
    if (options.rate !== undefined) changes.rate_per_second = options.rate === 'none' ? null : options.rate;
    if (options.maxInFlight !== undefined) changes.max_in_flight = options.maxInFlight === 'none' ? null : options.maxInFlight;
    Object.assign(changes, await rulesFromFlags(options), await optionsFromFlags(options, stdinSecretReader(context.stdin, (text) => context.out.note(text)), true));
    if (Object.keys(changes).length === 0) {
      throw new UsageError(
        'Nothing to change',
        'Pass a target (--url, --cli, --amqp, --nats, --redis, --mqtt), --status, --rate, --max-in-flight, --transformation-file, --clear-transformation, --filter, --filter-file, --clear-filter, ' +
          'or an option (--auth-…, --oauth2-…, --no-auth, --client-cert, --no-tls, --signature, --ordered, --order-key-…, --on-give-up, --no-ordering, --delay, --no-delay).',
      );
    }
    const client = await context.client();
    const updated = await client.destinations.update(id, changes);
    await context.out.result(updated, destinationView(updated));
  },
});
