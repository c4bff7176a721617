import { defineCommand } from '../../command.ts';
import { UsageError } from '../../errors.ts';
import { VIEW_BODY_PREFETCH_BYTES } from '../../output/body.ts';
import { eventView } from '../../views.ts';

export default defineCommand<[string], { body?: boolean }>({
  path: ['events', 'get'],
  summary: 'Show one event: request, headers, body and delivery attempts',
  description:
    'Show one event: the request as received, its headers, its body (JSON pretty-printed for reading; --json and --body give it exactly), ' +
    'and every delivery attempt.\n--json prints the API\'s event object: the exact body in "body" (UTF-8 text, or base64 when "body_encoding" is "base64").',
  examples: [
    ['hook events get evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'read it'],
    ['hook events get evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --body > payload.json', 'the body\'s exact bytes, e.g. to check a signature'],
    ['hook events get evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json | jq .attempts', 'its attempts as JSON'],
  ],
  configure(command) {
    command.argument('<event>', 'event id (evt_…)').option('--body', 'write only the body, byte for byte, to stdout');
  },
  async run(context, [id], options) {
    if (options.body && context.out.json) throw new UsageError('--body and --json cannot go together', 'Use --json for the event as JSON, or --body for the raw body bytes.');
    const client = await context.client();
    // A terminal shows only the start of a body: ask for no more than that (a pipe, --body and --json get all of it).
    const preview = context.out.interactive && !context.out.json && !options.body;
    const event = await client.events.get(id, preview ? { body_limit: VIEW_BODY_PREFETCH_BYTES } : {});
    if (options.body) {
      context.out.bytes(Buffer.from(event.body, event.body_encoding === 'base64' ? 'base64' : 'utf8'));
      return;
    }
    await context.out.result(event, () => eventView(event));
  },
});
