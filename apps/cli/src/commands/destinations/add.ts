import { Option } from 'commander';
import type { DestinationCreate } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { addDestinationOptions, addTargetOptions, optionsFromFlags, stdinSecretReader, targetFromFlags, type OptionFlags, type TargetFlags } from '../../destination-flags.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { rulesFromFlags } from '../../endpoint-rules.ts';
import { UsageError } from '../../errors.ts';
import { parsePositiveWholeNumber } from '../../option-parsers.ts';
import { destinationView } from '../../views.ts';

interface AddOptions extends TargetFlags, OptionFlags {
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
    'It sends to an http(s) URL (--url), holds events for `hook listen` (--cli), or publishes each event to a broker: RabbitMQ (--amqp), NATS JetStream (--nats), a Redis stream (--redis) or MQTT (--mqtt) (docs/delivery.md#queue-destinations).\n' +
    'It can sign in to its receiver (--auth-…, --oauth2-…), present a client certificate (--client-cert, --client-key), sign with ed25519 (--signature v1a), deliver in order (--ordered, --order-key-…) and hold events before their first attempt (--delay). ' +
    'A secret on the command line shows in process lists and shell history: give - instead (--auth-bearer -, --oauth2-client-secret -, --auth-basic user:-) and pipe it in on stdin.\n' +
    'A transformation (JavaScript, docs/transformations.md) and a filter (JSON, docs/filters.md) apply to this destination only.',
  examples: [
    ['hook destinations add orders --url https://example.com/webhooks', 'also deliver to a second server'],
    ['hook destinations add orders --cli', 'also hold events for `hook listen`'],
    ['hook destinations add orders --url https://slow.example.com/hooks --rate 5 --max-in-flight 2', 'a receiver that takes only so much'],
    ['hook destinations add orders --url https://example.com/paid --filter \'{"body":{"type":"order.paid"}}\'', 'only some events to this one'],
    ['hook destinations add orders --amqp amqp://rabbit.internal:5672 --exchange orders --routing-key order.created --auth-basic hook:-', 'publish to RabbitMQ, the password from stdin'],
    ['hook destinations add orders --redis redis://redis.internal:6379/0 --stream orders --max-len 100000', 'add each event to a Redis stream'],
    ['printf %s "$TOKEN" | hook destinations add orders --url https://api.example.com/hooks --auth-bearer -', 'a receiver that wants a bearer token'],
    ['hook destinations add orders --url https://example.com/hooks --order-key-header X-Customer-Id --on-give-up block', 'in order per customer'],
    ['hook destinations add orders --url https://internal.example.com/hooks --client-cert client.pem --client-key client-key.pem --ca ca.pem', 'mTLS to a private server'],
    ['hook destinations add orders --url https://example.com/hooks --signature v1a --delay 5m', 'ed25519 signatures, each event 5 minutes late'],
    ['hook destinations add orders --url https://example.com/hooks --json | jq -r .id', 'just the new id (dst_…)'],
  ],
  configure(command) {
    command.argument('<endpoint>', 'endpoint id (ep_…) or name');
    addTargetOptions(command, 'deliver');
    command
      .option('--rate <n>', 'start at most n deliveries per second (default: no limit)', parsePositiveWholeNumber)
      .option('--max-in-flight <n>', 'have at most n deliveries in flight at once (default: the relay\'s share)', parsePositiveWholeNumber)
      .option('--transformation-file <path>', 'reshape events for this destination with the JavaScript in this file (docs/transformations.md)')
      .addOption(new Option('--filter-file <path>', 'deliver here only events matching the JSON filter in this file (docs/filters.md)').conflicts('filter'))
      .option('--filter <json>', 'deliver here only events matching this JSON filter');
    addDestinationOptions(command, false);
  },
  async run(context, [ref], options) {
    const destination = targetFromFlags(options);
    if (destination === undefined) {
      throw new UsageError(
        'Say where the destination sends',
        'Pass --url <url> to deliver to a server, --cli to hold events for `hook listen`, or a broker: --amqp <url> --exchange <name> --routing-key <key>, --nats <url> --subject <subject>, --redis <url> --stream <name>, --mqtt <url> --topic <topic>.',
      );
    }
    const body: DestinationCreate = { destination };
    if (options.rate !== undefined) body.rate_per_second = options.rate;
    if (options.maxInFlight !== undefined) body.max_in_flight = options.maxInFlight;
    Object.assign(body, await rulesFromFlags(options), await optionsFromFlags(options, stdinSecretReader(context.stdin, (text) => context.out.note(text)), false));
    const client = await context.client();
    const endpointId = await endpointIdOf(client, ref);
    const added = await client.destinations.create(endpointId, body).catch((error: unknown) => {
      throw endpointErrorFor(ref, error);
    });
    await context.out.result(added, destinationView(added));
    context.out.hint(
      added.signature_scheme === 'v1a'
        ? 'Its receiver verifies deliveries with its public key (Public key above, whpk_…; docs/receiving.md).'
        : `Its receiver verifies deliveries with its own secret: hook destinations secret ${added.id}`,
    );
  },
});
