import { Option } from 'commander';
import type { DestinationTarget, EndpointCreate } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { rulesFromFlags } from '../../endpoint-rules.ts';
import { adoptAsDefault } from '../../forward/endpoint-choice.ts';
import { parseHttpUrl } from '../../option-parsers.ts';
import { endpointView } from '../../views.ts';
import { addVerificationOptions, verificationFromFlags, type VerificationFlags } from '../../verification-flags.ts';
import { addResponseOptions, responseFromFlags, type ResponseFlags } from '../../response-flags.ts';
import { addHandshakeOptions, handshakeFromFlags, type HandshakeFlags } from '../../handshake-flags.ts';
import { addDedupeOptions, dedupeFromFlags, type DedupeFlags } from '../../dedupe-flags.ts';

export default defineCommand<[string], { destination?: string; transformationFile?: string; filterFile?: string; filter?: string } & VerificationFlags & ResponseFlags & HandshakeFlags & DedupeFlags>({
  path: ['endpoints', 'create'],
  summary: 'Create an endpoint and print its receiving URL',
  description:
    'Create an endpoint. Its URL receives events at once (any method, any body, no key needed).\n' +
    'With --destination, events are delivered there, signed, with retries; without it they wait for `hook listen`.\n' +
    'The first endpoint a profile creates becomes its default endpoint, the one `hook listen` forwards without --endpoint (change it with `hook endpoints use <name>`).',
  examples: [
    ['hook endpoints create stripe-dev', 'events wait for `hook listen`'],
    ['hook endpoints create orders --destination https://example.com/webhooks', 'events are delivered to your server'],
    ['hook endpoints create ci --json | jq -r .url', 'just the receiving URL'],
    ['hook endpoints create github --verify github --verify-secret-file github-secret.txt', 'refuse requests GitHub did not sign'],
    ['hook endpoints create github --dedupe-header X-GitHub-Delivery', 'store a redelivered GitHub event once'],
    ['hook endpoints create orders --destination https://example.com/hooks --transformation-file t.js --filter \'{"body":{"type":{"$startsWith":"order."}}}\'', 'reshape and select events from the start'],
  ],
  configure(command) {
    command
      .argument('<name>', 'a name for the endpoint (1–200 characters); commands accept it instead of the id')
      .option('--destination <url>', 'deliver events to this http(s) URL (default: hold them for `hook listen`)', parseHttpUrl)
      .option('--transformation-file <path>', 'reshape events before delivery with the JavaScript in this file (docs/transformations.md)')
      .addOption(new Option('--filter-file <path>', 'deliver only events matching the JSON filter in this file (docs/filters.md)').conflicts('filter'))
      .option('--filter <json>', 'deliver only events matching this JSON filter');
    addVerificationOptions(command, false);
    addResponseOptions(command, false);
    addHandshakeOptions(command, false);
    addDedupeOptions(command, false);
  },
  async run(context, [name], options) {
    const client = await context.client();
    const destination: DestinationTarget = options.destination === undefined ? { type: 'cli' } : { type: 'url', url: options.destination };
    const settings: EndpointCreate = { name, destination };
    Object.assign(settings, await rulesFromFlags(options));
    const verification = await verificationFromFlags(options);
    if (verification) settings.verification = verification;
    const response = await responseFromFlags(options);
    if (response) settings.response = response;
    const handshake = await handshakeFromFlags(options);
    if (handshake) settings.handshake = handshake;
    const dedupe = dedupeFromFlags(options);
    if (dedupe) settings.dedupe = dedupe;
    const endpoint = await client.endpoints.create(settings);
    const isDefault = adoptAsDefault(context, endpoint);
    await context.out.result({ ...endpoint, default: isDefault }, endpointView(endpoint));
    if (isDefault) context.out.hint(`This is the default endpoint of \`hook listen\` (profile '${context.settings.profile}'); change it with \`hook endpoints use <name>\`.`);
    context.out.hint(`Send it a test event: hook send ${endpoint.id} --data '{"type":"test"}'`);
  },
});
