import { randomInt, randomUUID } from 'node:crypto';
import { SAMPLE_PROVIDERS } from '@hook/core';
import { HookApiError } from '@hook/client/errors';
import { defineCommand } from '../command.ts';
import { RelayErrorWithFix, UsageError } from '../errors.ts';
import { endpointToSendTo } from '../send-target.ts';
import { sentOutcome } from '../sent-outcome.ts';
import type { Provider, SampleContext } from '../trigger/providers.ts';

interface TriggerOptions {
  endpoint?: string;
  secret?: string;
  list?: boolean;
  path?: string;
}

/** The providers, loaded when the command runs: the samples stay out of every other command's start. */
async function providers(): Promise<readonly Provider[]> {
  return (await import('../trigger/providers.ts')).PROVIDERS;
}

/** `a, b, c or d`. */
function oneOf(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

function listing(all: readonly Provider[]) {
  return {
    providers: all.map((provider) => ({
      provider: provider.name,
      signature: provider.signature,
      default_secret: provider.defaultSecret,
      events: provider.events.map((event) => ({ event: event.name, description: event.description })),
    })),
  };
}

/** A path and query after the receiving URL, as `hook send --path` takes it. */
function pathSuffix(path: string | undefined): string {
  return path === undefined || path === '' ? '' : /^[/?]/.test(path) ? path : `/${path}`;
}

function freshContext(endpointUrl: string): SampleContext {
  return {
    nowMs: Date.now(),
    uuid: randomUUID,
    token: (length, alphabet) => Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join(''),
    endpointUrl,
  };
}

export default defineCommand<[string | undefined, string | undefined], TriggerOptions>({
  path: ['trigger'],
  summary: `Send a sample ${oneOf(SAMPLE_PROVIDERS.map((provider) => provider.title))} event, signed as that provider signs it`,
  description: [
    'Send a realistic sample event (shipped with hook) to an endpoint\'s receiving URL, with the provider\'s own headers, ' +
      'signed with the provider\'s scheme and a test secret, so your handler\'s signature check can be exercised offline. ' +
      'Ids and timestamps that handlers check (Stripe\'s and Slack\'s signed timestamps, delivery ids) are fresh on every send.',
    'The test secret is fixed per provider (configure your handler with it once) and printed on stderr; --secret signs with yours instead.',
    'Without --endpoint: the profile\'s default endpoint (`hook endpoints use`), else the account\'s only one.',
    '`hook trigger` alone (or --list) lists the providers and their events. --json prints {"event_id", "status", "provider", "event", "secret", "endpoint_id", "endpoint_name", "headers", "size"}; ' +
      'status is pending, duplicate, or handshake: the endpoint answers that provider\'s handshake itself (Slack\'s url_verification with --handshake slack), ' +
      'stores it as "type" (slack.handshake) and delivers it nowhere. Docs: docs/cli.md#hook-trigger',
  ].join('\n\n'),
  examples: [
    ['hook trigger --list', 'the providers and events there are samples of'],
    ['hook trigger github push --endpoint github-dev', 'a push event, signed with X-Hub-Signature-256'],
    ['hook trigger stripe payment_intent.succeeded --secret whsec_…', 'signed with your endpoint secret from Stripe'],
    ['hook trigger shopify orders/create --path /webhooks/shopify', 'to a path after the receiving URL'],
  ],
  configure(command) {
    command
      .argument('[provider]', oneOf(SAMPLE_PROVIDERS.map((provider) => provider.name)))
      .argument('[event]', 'the event: push, payment_intent.succeeded, orders/create, app_mention… (see --list)')
      .option('--endpoint <endpoint>', 'endpoint to send to (id or name; default: the profile\'s default endpoint, else the only one)')
      .option('--secret <secret>', 'sign with this secret instead of the provider\'s test secret')
      .option('--path <path>', 'path and query to add after the receiving URL, e.g. /webhooks/github')
      .option('--list', 'list the providers and their events');
  },
  async run(context, [providerName, eventName], options) {
    const { out } = context;
    const all = await providers();
    if (options.list || providerName === undefined) {
      if (providerName !== undefined) throw new UsageError('--list takes no provider or event', 'Run `hook trigger --list` alone.');
      const value = listing(all);
      await out.result(value, [
        {
          kind: 'table',
          columns: [{ header: 'Provider' }, { header: 'Event' }, { header: 'What it is' }],
          rows: all.flatMap((provider) => provider.events.map((event) => [provider.name, event.name, event.description] as const)),
          empty: 'No samples.',
        },
        { kind: 'heading', text: 'Signatures and test secrets' },
        { kind: 'table', columns: [{ header: 'Provider' }, { header: 'Test secret' }, { header: 'Signature' }], rows: all.map((provider) => [provider.name, provider.defaultSecret, provider.signature] as const), empty: '' },
      ]);
      out.hint('Send one: hook trigger <provider> <event> [--endpoint <endpoint>]');
      return;
    }
    const provider = all.find((candidate) => candidate.name === providerName.toLowerCase());
    if (!provider) {
      throw new UsageError(`'${providerName}' is not a provider hook trigger has samples of`, `Use one of ${all.map((candidate) => candidate.name).join(', ')}; \`hook trigger --list\` shows their events.`);
    }
    const eventNames = provider.events.map((event) => event.name).join(', ');
    if (eventName === undefined) throw new UsageError(`'hook trigger ${provider.name}' needs an event: ${eventNames}`, `Name one, as in \`hook trigger ${provider.name} ${provider.events[0]!.name}\`; \`hook trigger --list\` shows what each is.`);
    const event = provider.events.find((candidate) => candidate.name === eventName);
    if (!event) throw new UsageError(`'${eventName}' is not a ${provider.title} event hook trigger has a sample of`, `Use one of ${eventNames}; \`hook trigger --list\` shows what each is.`);
    if (options.secret === '') throw new UsageError('--secret is empty', `Pass the secret your handler verifies with, or leave --secret out to sign with ${provider.title}'s test secret.`);
    const secret = options.secret ?? provider.defaultSecret;

    const client = await context.client();
    const endpoint = await endpointToSendTo(context, client, options.endpoint, `hook trigger ${provider.name} ${event.name}`);
    const request = provider.request(event, secret, freshContext(endpoint.url));
    const { body } = request;
    // Names lower-cased, as the relay stores them: a provider's User-Agent then replaces the client's own.
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
    const accepted = await client.ingest.send(`${endpoint.url}${pathSuffix(options.path)}`, { method: 'POST', headers, body }).catch((error: unknown) => {
      // The endpoint checks signatures with its own secret: the sample was signed with the test secret unless --secret said otherwise.
      if (error instanceof HookApiError && error.code === 'signature_invalid' && options.secret === undefined) {
        throw new RelayErrorWithFix(
          error,
          `The endpoint ${endpoint.name} checks signatures with its own secret, and this sample was signed with ${provider.title}'s test secret. ` +
            `Sign it with the endpoint's: \`hook trigger ${provider.name} ${event.name} --endpoint ${endpoint.name} --secret <secret>\` (the secret you set with --verify-secret-file).`,
        );
      }
      throw error;
    });
    const outcome = sentOutcome(accepted, endpoint);
    out.note(
      `Signed as ${provider.title} signs (${provider.signature.split(':')[0]}) with ${options.secret === undefined ? `${provider.title}'s test secret` : 'your --secret'}: ${secret}`,
    );
    await out.result(
      {
        event_id: accepted.id,
        status: accepted.status,
        provider: provider.name,
        event: event.name,
        secret,
        endpoint_id: endpoint.id,
        endpoint_name: endpoint.name,
        headers,
        size: body.length,
        ...outcome.fields,
      },
      [{ kind: 'text', text: `Sent ${provider.name} ${event.name} to ${endpoint.name} (${endpoint.id}): ${accepted.id} ${accepted.status}, ${body.length} bytes${outcome.meaning}.` }],
    );
    // A handshake reaches no handler, so there is no signature to verify there.
    if (options.secret === undefined && accepted.status !== 'handshake') out.hint(`Verify it in your handler with that secret (or sign with yours: --secret). See it: hook events get ${accepted.id}`);
    else out.hint(`See it: hook events get ${accepted.id}`);
  },
});
