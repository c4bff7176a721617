import { defineCommand } from '../../command.ts';
import { destinationNames, issueView } from '../../issue-views.ts';
import { parseIssueId } from '../../option-parsers.ts';

export default defineCommand<[string], object>({
  path: ['issues', 'ack'],
  summary: 'Acknowledge an issue: someone is on it, so new failures no longer alert',
  description:
    'Acknowledge an issue (POST /v1/issues/{id}/acknowledge): it stays listed, and new failures still count in it, but they send no alert. ' +
    'Acknowledging one already acknowledged changes nothing. `hook issues resolve <issue>` closes it; the relay resolves it by itself once every event it covers is delivered.\n' +
    '--json prints the issue.',
  examples: [['hook issues ack iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'take the issue on']],
  configure(command) {
    command.argument('<issue>', 'issue id (iss_…)', parseIssueId);
  },
  async run(context, [id]) {
    const client = await context.client();
    const issue = await client.issues.acknowledge(id);
    const names = context.out.json ? new Map<string, string>() : await destinationNames(client);
    const state = issue.status === 'acknowledged' ? 'acknowledged: new failures update it without alerting' : `${issue.status}`;
    await context.out.result(issue, [{ kind: 'text', text: `Issue ${id} is ${state}.` }, ...issueView(issue, names)]);
  },
});
