import { defineCommand } from '../../command.ts';
import { resolveEndpoint } from '../../endpoint-ref.ts';
import { UsageError } from '../../errors.ts';

export default defineCommand<[string | undefined], { clear?: boolean }>({
  path: ['endpoints', 'use'],
  summary: 'Choose the default endpoint: the one `hook listen` forwards without --endpoint',
  description:
    'Make an endpoint the default of this profile: `hook listen <port>` then forwards its events without --endpoint. ' +
    'The default is kept in the profile (config file), per profile; the first `hook endpoints create` sets it when the profile has none. ' +
    '`hook endpoints list` marks it. --clear forgets it (hook listen then takes the account\'s only endpoint, or asks).',
  examples: [
    ['hook endpoints use stripe-dev', 'hook listen 3000 now forwards stripe-dev'],
    ['hook endpoints use ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --profile work', 'by id, for another profile'],
    ['hook endpoints use --clear', 'no default endpoint'],
  ],
  configure(command) {
    command
      .argument('[endpoint]', 'endpoint id (ep_…) or name')
      .option('--clear', 'forget the default endpoint');
  },
  async run(context, [ref], options) {
    const { out, settings, config } = context;
    if (options.clear) {
      if (ref !== undefined) throw new UsageError('--clear takes no endpoint', 'Run `hook endpoints use <endpoint>` to choose one, or `hook endpoints use --clear` to forget it.');
      config.setDefaultEndpoint(settings.profile, null);
      await out.result({ profile: settings.profile, default_endpoint: null }, [
        { kind: 'text', text: `Profile '${settings.profile}' has no default endpoint now.${settings.defaultEndpoint ? ` (It was ${settings.defaultEndpoint.name}, ${settings.defaultEndpoint.id}.)` : ''}` },
      ]);
      return;
    }
    if (ref === undefined) throw new UsageError('hook endpoints use needs the endpoint to make the default (its id or name)', 'Name the endpoint: `hook endpoints use <endpoint>` (`hook endpoints list` shows them), or `hook endpoints use --clear`.');
    const client = await context.client();
    const endpoint = await resolveEndpoint(client, ref);
    config.setDefaultEndpoint(settings.profile, { id: endpoint.id, name: endpoint.name });
    await out.result({ profile: settings.profile, default_endpoint: endpoint }, [
      { kind: 'text', text: `Default endpoint of profile '${settings.profile}': ${endpoint.name} (${endpoint.id}). \`hook listen <port>\` forwards its events.` },
    ]);
    if (!endpoint.destinations.some((destination) => destination.destination.type === 'cli')) {
      out.hint(`${endpoint.name} delivers only to URLs: \`hook listen\` shows copies of its events and does not decide their status. Add a cli destination with \`hook destinations add ${ref} --cli\` to deliver to hook listen.`);
    }
  },
});
