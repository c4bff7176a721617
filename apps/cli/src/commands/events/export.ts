import { writeFile } from 'node:fs/promises';
import { defineCommand } from '../../command.ts';
import { OUTPUT_UNWRITABLE, UserError } from '../../errors.ts';
import { fixtureFromEvent, fixtureText } from '../../event-fixture.ts';
import { bytes } from '../../output/view.ts';

export default defineCommand<[string], { fixture: string }>({
  path: ['events', 'export'],
  summary: 'Save a stored event as a fixture file, to send it again with `hook send --fixture`',
  description: [
    'Save a stored event as a fixture file: the request as it arrived (method, path, query, headers, content type) and its exact body ' +
      '(UTF-8 text, or base64 when it is not UTF-8), as JSON. `hook send --fixture <file>` sends it again, byte for byte. ' +
      'The file is written whole (an existing one is replaced). Format: docs/cli.md#fixture-files',
    '--json prints {"event_id", "file", "method", "path", "query", "content_type", "body_encoding", "size"}.',
  ].join('\n\n'),
  examples: [
    ['hook events export evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --fixture fixtures/order-paid.json', 'save it'],
    ['hook send --fixture fixtures/order-paid.json --endpoint orders-dev', 'send it again, byte for byte'],
  ],
  configure(command) {
    command.argument('<event>', 'event id (evt_…)').requiredOption('--fixture <file>', 'the file to write (JSON)');
  },
  async run(context, [id], options) {
    const client = await context.client();
    const event = await client.events.get(id);
    const fixture = fixtureFromEvent(event);
    try {
      await writeFile(options.fixture, fixtureText(fixture));
    } catch (error) {
      throw new UserError(OUTPUT_UNWRITABLE, `Cannot write ${options.fixture}: ${(error as Error).message}`);
    }
    const size = Buffer.from(fixture.body, fixture.body_encoding === 'base64' ? 'base64' : 'utf8').length;
    const target = `${fixture.path || '/'}${fixture.query ? `?${fixture.query}` : ''}`;
    await context.out.result(
      { event_id: event.id, file: options.fixture, method: fixture.method, path: fixture.path, query: fixture.query, content_type: fixture.content_type, body_encoding: fixture.body_encoding, size },
      [{ kind: 'text', text: `Saved ${event.id} (${fixture.method} ${target}, ${fixture.content_type ?? 'no content type'}, ${bytes(size)}) to ${options.fixture}.` }],
    );
    context.out.hint(`Send it again: hook send --fixture ${options.fixture} --endpoint <endpoint>`);
  },
});
