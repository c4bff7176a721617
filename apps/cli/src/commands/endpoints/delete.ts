import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';

export default defineCommand<[string], object>({
  path: ['endpoints', 'delete'],
  summary: 'Delete an endpoint: its URL stops receiving; its events stay in the history',
  examples: [
    ['hook endpoints delete orders', 'by name'],
    ['hook endpoints delete ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json', 'by id; prints {"id": …, "deleted": true}'],
  ],
  configure(command) {
    command.argument('<endpoint>', 'endpoint id (ep_…) or name');
  },
  async run(context, [ref]) {
    const client = await context.client();
    const id = await endpointIdOf(client, ref);
    await client.endpoints.delete(id).catch((error: unknown) => {
      throw endpointErrorFor(ref, error);
    });
    const wasDefault = context.settings.defaultEndpoint?.id === id;
    // The default endpoint of `hook listen` is gone with it; the profile forgets it.
    if (wasDefault) context.config.setDefaultEndpoint(context.settings.profile, null);
    await context.out.result({ id, deleted: true }, [
      { kind: 'text', text: `Deleted endpoint ${ref === id ? id : `'${ref}' (${id})`}. Its URL now answers 404; its events stay in the history.` },
    ]);
    if (wasDefault) context.out.hint(`It was the default endpoint of \`hook listen\`; choose another with \`hook endpoints use <name>\`.`);
  },
});
