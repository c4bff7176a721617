import { countOf } from '@hook/core';
import { defineCommand } from '../../command.ts';
import { parseDestinationId } from '../../option-parsers.ts';
import { blockedKeyTable } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['destinations', 'blocked'],
  summary: 'List the keys of an ordered destination held by an event that gave up',
  description:
    'List the blocked keys of an ordered destination (GET /v1/destinations/{id}/blocked-keys). With --on-give-up block (the default of an ordered destination), ' +
    'an event that failed all its attempts holds its key: the events behind it wait. Fix the receiver, then replay that event (`hook events replay <event>`), ' +
    'which delivers it and then the waiting ones in order, or release the key without it (`hook destinations unblock <destination> --key <key>`). ' +
    '--json prints {"data": [{"key", "event_id", "blocked_at", "waiting"}, …]}.',
  examples: [
    ['hook destinations blocked dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'which keys wait, behind which event'],
    ['hook destinations blocked dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json | jq -r \'.data[].event_id\'', 'the events that gave up'],
  ],
  configure(command) {
    command.argument('<destination>', 'destination id (dst_…)', parseDestinationId);
  },
  async run(context, [id]) {
    const client = await context.client();
    const list = await client.destinations.blockedKeys(id);
    await context.out.result(list, [blockedKeyTable(list.data)]);
    const first = list.data[0];
    if (first) {
      context.out.hint(
        `${countOf(list.data.length, 'key')} blocked. Fix the receiver and replay the event that gave up (hook events replay ${first.event_id}), ` +
          `or let the waiting events go without it: hook destinations unblock ${id} --key ${shellWord(first.key)}`,
      );
    }
  },
});

/** A key as one shell word: as it is when plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
