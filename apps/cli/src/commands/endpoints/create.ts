import type { Destination } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { parseHttpUrl } from '../../option-parsers.ts';
import { endpointView } from '../../views.ts';

export default defineCommand<[string], { destination?: string }>({
  path: ['endpoints', 'create'],
  summary: 'Create an endpoint and print its receiving URL',
  description:
    'Create an endpoint. Its URL receives events at once (any method, any body, no key needed).\n' +
    'With --destination, events are delivered there, signed, with retries; without it they wait for `hook listen`.',
  examples: [
    ['hook endpoints create stripe-dev', 'events wait for `hook listen`'],
    ['hook endpoints create orders --destination https://example.com/webhooks', 'events are delivered to your server'],
    ['hook endpoints create ci --json | jq -r .url', 'just the receiving URL'],
  ],
  configure(command) {
    command
      .argument('<name>', 'a name for the endpoint (1–200 characters); commands accept it instead of the id')
      .option('--destination <url>', 'deliver events to this http(s) URL (default: hold them for `hook listen`)', parseHttpUrl);
  },
  async run(context, [name], options) {
    const client = await context.client();
    const destination: Destination = options.destination === undefined ? { type: 'cli' } : { type: 'url', url: options.destination };
    const endpoint = await client.endpoints.create({ name, destination });
    await context.out.result(endpoint, endpointView(endpoint));
    context.out.hint(`Send it a test event: hook send ${endpoint.id} --data '{"type":"test"}'`);
  },
});
