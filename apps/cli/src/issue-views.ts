/**
 * How issues (failed deliveries grouped by destination and kind, docs/issues.md) read for a
 * person: the views `hook issues …` hands to the output module, and the names a person knows
 * destinations by.
 */
import type { Endpoint, HookClient, Issue, IssueEvent } from '@hook/client';
import { countOf } from '@hook/core';
import { statusCell, type Block, type Cell, type View } from './output/view.ts';
import { targetText, time } from './views.ts';

/** An issue's status as a word toned by what it asks of a person: open needs one, acknowledged has one, resolved needs none. */
export function issueStatusCell(status: Issue['status']): Cell {
  if (status === 'open') return { text: 'open', tone: 'bad' };
  if (status === 'acknowledged') return { text: 'acknowledged', tone: 'warn' };
  if (status === 'resolved') return { text: 'resolved', tone: 'good' };
  return statusCell(status);
}

/** What the destination answered last, or why nothing came. */
export function lastAnswerText(status: number | null, error: string | null): string {
  if (status !== null) return `answered ${status}${error ? ` (${error})` : ''}`;
  return error ?? '-';
}

/** Destination id → `orders → https://example.com/hooks`: the endpoint's name and where the destination sends. */
export type DestinationNames = ReadonlyMap<string, string>;

/**
 * The names of every destination, read from the endpoint list (which carries each endpoint's
 * destinations). Empty when the list cannot be read: ids are shown then, and the issues were
 * what was asked for.
 */
export async function destinationNames(client: HookClient): Promise<DestinationNames> {
  const names = new Map<string, string>();
  try {
    for await (const endpoint of client.endpoints.iterate()) addDestinations(names, endpoint);
  } catch {
    // Ids, then.
  }
  return names;
}

function addDestinations(names: Map<string, string>, endpoint: Endpoint): void {
  for (const destination of endpoint.destinations ?? []) names.set(destination.id, `${endpoint.name} → ${targetText(destination.destination)}`);
}

/** `hook issues list`: most recently seen first. */
export function issueTable(issues: readonly Issue[], names: DestinationNames = new Map()): Block {
  return {
    kind: 'table',
    columns: [
      { header: 'Id' }, { header: 'Status' }, { header: 'Problem' }, { header: 'Destination' },
      { header: 'Events', align: 'right' }, { header: 'Failures', align: 'right' }, { header: 'Last seen' },
    ],
    rows: issues.map((issue) => [
      issue.id, issueStatusCell(issue.status), issue.title, names.get(issue.destination_id) ?? issue.destination_id,
      String(issue.event_count), String(issue.failure_count), time(issue.last_seen_at),
    ]),
    empty: 'No issues match: nothing is failing.',
  };
}

/** `delivered 2 of 5, failing 2, pending 1`: where the covered events' deliveries stand now. */
export function progressText(events: Issue['events']): string {
  return `delivered ${events.delivered} of ${events.total}, failing ${events.failing}, pending ${events.pending}`;
}

/** One issue's facts. */
export function issueView(issue: Issue, names: DestinationNames = new Map()): View {
  const resolved = issue.resolved_at === null ? '-' : `${time(issue.resolved_at)} (${issue.resolved_by === 'auto' ? 'every event delivered' : 'by hand'})`;
  return [{
    kind: 'fields',
    rows: [
      ['Id', issue.id],
      ['Status', issueStatusCell(issue.status)],
      ['Problem', `${issue.title} (${issue.kind})`],
      ['Destination', names.has(issue.destination_id) ? `${issue.destination_id} (${names.get(issue.destination_id)})` : issue.destination_id],
      ['Endpoint', issue.endpoint_id],
      ['Last answer', lastAnswerText(issue.last_status, issue.last_error)],
      ['Failures', `${countOf(issue.failure_count, 'failed attempt')} over ${countOf(issue.event_count, 'event')}`],
      ['Events now', progressText(issue.events)],
      ['First seen', time(issue.first_seen_at)],
      ['Last seen', `${time(issue.last_seen_at)} (${issue.last_event_id})`],
      ['Opened', issue.reopen_count > 0 ? `${time(issue.opened_at)} (reopened ${countOf(issue.reopen_count, 'time')})` : time(issue.opened_at)],
      ['Acknowledged', time(issue.acknowledged_at)],
      ['Resolved', resolved],
      ['Last retry', issue.retry ? `${time(issue.retry.requested_at)}, ${countOf(issue.retry.queued, 'event')} queued` : '-'],
    ],
  }];
}

/** The events an issue covers, newest failure first, with their delivery to its destination. */
export function issueEventTable(events: readonly IssueEvent[]): Block {
  return {
    kind: 'table',
    columns: [{ header: 'Event' }, { header: 'Type' }, { header: 'Received' }, { header: 'Delivery' }, { header: 'Attempts', align: 'right' }, { header: 'Last failed' }, { header: 'Last answer' }],
    rows: events.map((event) => [
      event.event_id, event.type ?? '-', time(event.received_at), statusCell(event.delivery_status), String(event.attempt_count),
      time(event.last_failed_at), lastAnswerText(event.last_status, event.last_error),
    ]),
    empty: 'No events: the relay\'s retention has dropped them.',
  };
}
