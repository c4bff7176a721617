import { defineCommand } from '../../command.ts';
import { destinationNames, issueView } from '../../issue-views.ts';
import { parseIssueId } from '../../option-parsers.ts';

export default defineCommand<[string], object>({
  path: ['issues', 'resolve'],
  summary: 'Resolve an issue by hand; a new failure of its kind reopens it',
  description:
    'Resolve an issue (POST /v1/issues/{id}/resolve): it leaves the default list. Its events are not retried (`hook issues retry <issue>` does that, ' +
    'and the relay resolves the issue by itself once all are delivered). A new failure to the same destination of the same kind reopens it. ' +
    'Resolving one already resolved changes nothing.\n' +
    '--json prints the issue.',
  examples: [['hook issues resolve iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'close the issue']],
  configure(command) {
    command.argument('<issue>', 'issue id (iss_…)', parseIssueId);
  },
  async run(context, [id]) {
    const client = await context.client();
    const issue = await client.issues.resolve(id);
    const names = context.out.json ? new Map<string, string>() : await destinationNames(client);
    await context.out.result(issue, [{ kind: 'text', text: `Issue ${id} is ${issue.status}; a new failure of its kind reopens it.` }, ...issueView(issue, names)]);
  },
});
