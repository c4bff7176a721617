/** Words the issue tools share. */
import type { Issue } from '@hook/client';

/** `Issue iss_… (Receiver answered 5xx) on dst_…, open: delivered 2 of 5, failing 3, pending 0`. */
export function issueSummary(issue: Issue): string {
  const { total, delivered, failing, pending } = issue.events;
  return `Issue ${issue.id} (${issue.title}) on ${issue.destination_id}, ${issue.status}: delivered ${delivered} of ${total}, failing ${failing}, pending ${pending}`;
}
