import { Option } from 'commander';
import { HANDSHAKE_PROVIDERS, VERIFICATION_PROVIDERS } from '@hook/core';
import type { EndpointUpdate } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { rulesFromFlags } from '../../endpoint-rules.ts';
import { UsageError } from '../../errors.ts';
import { parseHttpUrl } from '../../option-parsers.ts';
import { endpointView } from '../../views.ts';
import { addVerificationOptions, verificationFromFlags, type VerificationFlags } from '../../verification-flags.ts';
import { addResponseOptions, responseFromFlags, type ResponseFlags } from '../../response-flags.ts';
import { addHandshakeOptions, handshakeFromFlags, type HandshakeFlags } from '../../handshake-flags.ts';
import { addDedupeOptions, dedupeFromFlags, type DedupeFlags } from '../../dedupe-flags.ts';

interface UpdateOptions extends VerificationFlags, ResponseFlags, HandshakeFlags, DedupeFlags {
  name?: string;
  destination?: string;
  cli?: boolean;
  pause?: boolean;
  resume?: boolean;
  disable?: boolean;
  transformationFile?: string;
  clearTransformation?: boolean;
  filterFile?: string;
  filter?: string;
  clearFilter?: boolean;
}

const STATUS_FLAGS = ['pause', 'resume', 'disable'] as const;

export default defineCommand<[string], UpdateOptions>({
  path: ['endpoints', 'update'],
  summary: 'Rename an endpoint, change its destination, transformation, filter, signature verification, custom response, handshake or dedupe, or pause, resume or disable it',
  description:
    'Change an endpoint (PATCH /v1/endpoints/{id}); what is not given stays as it is.\n' +
    'Paused: events are received and held. Disabled: the URL refuses events (410). Resume makes it active again and delivers what was held, oldest first.\n' +
    'A transformation (JavaScript, docs/transformations.md) reshapes each event before delivery; a filter (JSON, docs/filters.md) decides which are delivered.\n' +
    `Verification (docs/sources.md) checks each request's signature at the ingest URL with the sender's secret: --verify ${VERIFICATION_PROVIDERS.join('|')}.\n` +
    'A custom response (docs/sources.md) answers each stored request with your status, headers and body; the --response-… flags given make the whole response.\n' +
    `A handshake (docs/sources.md) is answered at the ingest URL at once and stored, not delivered: --handshake ${HANDSHAKE_PROVIDERS.join('|')}.\n` +
    'Dedupe (docs/sources.md) answers a request whose key (a header, or a JSON field) was already stored with the original event\'s id, and stores and delivers it no second time.',
  examples: [
    ['hook endpoints update orders --destination https://example.com/webhooks', 'deliver to a URL (waiting events go there now)'],
    ['hook endpoints update orders --cli', 'hold events for `hook listen` instead'],
    ['hook endpoints update orders --pause', 'keep receiving, stop delivering'],
    ['hook endpoints update orders --resume', 'deliver again, held events first'],
    ['hook endpoints update ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --name orders-v2', 'rename'],
    ['hook endpoints update orders --transformation-file transform.js', 'reshape events before delivery'],
    ['hook endpoints update orders --filter \'{"body":{"type":{"$startsWith":"order."}}}\'', 'deliver only order events'],
    ['hook endpoints update orders --clear-transformation --clear-filter', 'deliver events as received, all of them'],
    ['hook endpoints update github --verify github --verify-secret-file github-secret.txt', 'refuse requests GitHub did not sign (401)'],
    ['hook endpoints update stripe --verify stripe --verify-secret-file whsec.txt --verify-mode flag', 'store every request, marked verified or not'],
    ['hook endpoints update github --no-verify', 'stop checking signatures'],
    ['hook endpoints update orders --response-status 202 --response-header \'Content-Type: application/json\' --response-body-file answer.json', 'answer senders your way'],
    ['hook endpoints update whatsapp --handshake meta --handshake-secret-file verify-token.txt', 'answer Meta\'s subscribe check'],
    ['hook endpoints update orders --clear-response', 'answer with {"id","status"} again'],
    ['hook endpoints update github --dedupe-header X-GitHub-Delivery', 'store each GitHub delivery once'],
    ['hook endpoints update stripe --dedupe-field id', 'store each Stripe event (evt_…) once'],
    ['hook endpoints update github --no-dedupe', 'store every request again'],
  ],
  configure(command) {
    command
      .argument('<endpoint>', 'endpoint id (ep_…) or name')
      .option('--name <name>', 'a new name')
      .addOption(new Option('--destination <url>', 'deliver events to this http(s) URL').argParser(parseHttpUrl).conflicts('cli'))
      .addOption(new Option('--cli', 'hold events for `hook listen` (no URL destination)'))
      .addOption(new Option('--pause', 'status paused: receive events, hold delivery').conflicts(['resume', 'disable']))
      .addOption(new Option('--resume', 'status active: receive and deliver').conflicts(['pause', 'disable']))
      .addOption(new Option('--disable', 'status disabled: the URL refuses events').conflicts(['pause', 'resume']))
      .addOption(new Option('--transformation-file <path>', 'set the transformation: JavaScript in this file (at most 64 KiB)').conflicts('clearTransformation'))
      .addOption(new Option('--clear-transformation', 'remove the transformation: deliver events as received'))
      .addOption(new Option('--filter-file <path>', 'set the filter: JSON in this file').conflicts(['filter', 'clearFilter']))
      .addOption(new Option('--filter <json>', 'set the filter: JSON given inline').conflicts('clearFilter'))
      .addOption(new Option('--clear-filter', 'remove the filter: deliver every event'));
    addVerificationOptions(command, true);
    addResponseOptions(command, true);
    addHandshakeOptions(command, true);
    addDedupeOptions(command, true);
  },
  async run(context, [ref], options) {
    const changes: EndpointUpdate = {};
    if (options.name !== undefined) changes.name = options.name;
    if (options.destination !== undefined) changes.destination = { type: 'url', url: options.destination };
    if (options.cli) changes.destination = { type: 'cli' };
    if (options.pause) changes.status = 'paused';
    if (options.resume) changes.status = 'active';
    if (options.disable) changes.status = 'disabled';
    Object.assign(changes, await rulesFromFlags(options));
    const verification = await verificationFromFlags(options);
    if (verification !== undefined) changes.verification = verification;
    const response = await responseFromFlags(options);
    if (response !== undefined) changes.response = response;
    const handshake = await handshakeFromFlags(options);
    if (handshake !== undefined) changes.handshake = handshake;
    const dedupe = dedupeFromFlags(options);
    if (dedupe !== undefined) changes.dedupe = dedupe;
    if (Object.keys(changes).length === 0) {
      throw new UsageError(
        'Nothing to change',
        `Pass --name, --destination <url>, --cli, --transformation-file, --clear-transformation, --filter, --filter-file, --clear-filter, --verify <provider> --verify-secret-file <path>, --no-verify, --response-status, --response-header, --response-body-file, --clear-response, --handshake <provider>, --no-handshake, --dedupe-header <name>, --dedupe-field <path>, --no-dedupe, or one of ${STATUS_FLAGS.map((flag) => `--${flag}`).join(', ')}.`,
      );
    }
    const client = await context.client();
    const id = await endpointIdOf(client, ref);
    const endpoint = await client.endpoints.update(id, changes).catch((error: unknown) => {
      throw endpointErrorFor(ref, error);
    });
    await context.out.result(endpoint, endpointView(endpoint));
  },
});
