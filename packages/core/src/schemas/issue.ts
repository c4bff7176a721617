/** Issues: failed deliveries grouped by destination and kind of failure (docs/issues.md). */
import { Type } from 'typebox';
import { EVENT_STATUSES } from '../events.ts';
import { ISSUE_KINDS, ISSUE_RESOLVERS, ISSUE_STATUSES } from '../issues.ts';
import { IdOf, IdParams, NullableTimestamp, Page, PageQuery, Timestamp } from './common.ts';

export const IssueKindSchema = Type.Enum([...ISSUE_KINDS], { description: 'What kind of failure the issue groups (docs/issues.md#kinds)' });
export const IssueStatusSchema = Type.Enum([...ISSUE_STATUSES]);

/** `?status=` of GET /v1/issues: one status or several, comma-separated. */
export const ISSUE_STATUS_LIST_PATTERN = `^(${ISSUE_STATUSES.join('|')})(,(${ISSUE_STATUSES.join('|')}))*$`;

export const IssueSchema = Type.Object({
  id: IdOf('issue', 'Issue id'),
  endpoint_id: IdOf('endpoint', 'The endpoint of the destination that fails'),
  destination_id: IdOf('destination', 'The destination that fails'),
  kind: IssueKindSchema,
  title: Type.String({ description: 'The kind in words, e.g. "Receiver answered 5xx"' }),
  status: Type.Enum([...ISSUE_STATUSES], { description: 'open; acknowledged (a person saw it: new failures do not alert); resolved (by a person, or by itself once every event it covers was delivered)' }),
  resolved_by: Type.Union([Type.Enum([...ISSUE_RESOLVERS]), Type.Null()], { description: 'user (resolved by a person) or auto (every covered event delivered); null unless resolved' }),
  first_seen_at: Timestamp,
  last_seen_at: Timestamp,
  opened_at: { ...Timestamp, description: 'When it was opened, or last reopened' },
  acknowledged_at: NullableTimestamp,
  resolved_at: NullableTimestamp,
  failure_count: Type.Integer({ description: 'Failed attempts it grouped, ever' }),
  event_count: Type.Integer({ description: 'Events it covered, ever' }),
  reopen_count: Type.Integer({ description: 'How many times a failure reopened it after it was resolved' }),
  last_status: Type.Union([Type.Integer(), Type.Null()], { description: 'Its last failure\'s HTTP status; null when no answer came' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'Its last failure\'s error, when no answer came' }),
  last_event_id: IdOf('event', 'The event of its last failure'),
  events: Type.Object({
    total: Type.Integer({ description: 'Covered events still kept (retention drops older ones)' }),
    delivered: Type.Integer({ description: 'Of those, delivered to this destination since' }),
    failing: Type.Integer({ description: 'Failed or retrying' }),
    pending: Type.Integer({ description: 'Waiting for an attempt (a retry asked for, or not tried yet)' }),
  }, { description: 'The deliveries of its covered events to its destination, right now' }),
  retry: Type.Union([
    Type.Object({
      requested_at: Timestamp,
      queued: Type.Integer({ description: 'How many deliveries the retry queued' }),
    }),
    Type.Null(),
  ], { description: 'The last retry of every covered event asked for (POST /v1/issues/{id}/retry); null: none' }),
});

/** `GET /v1/issues` query. */
export const IssueListQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ pattern: ISSUE_STATUS_LIST_PATTERN, description: 'Only issues in these statuses, comma-separated; default open,acknowledged' })),
    endpoint_id: Type.Optional(IdOf('endpoint', 'Only this endpoint\'s issues')),
    destination_id: Type.Optional(IdOf('destination', 'Only this destination\'s issues')),
    kind: Type.Optional(IssueKindSchema),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const IssuePage = Page(IssueSchema);
export const IssueParams = IdParams('issue', 'Issue id');

/** One event an issue covers, and how its delivery to the issue's destination stands. */
export const IssueEventSchema = Type.Object({
  event_id: IdOf('event', 'Event id'),
  type: Type.Union([Type.String(), Type.Null()]),
  received_at: Timestamp,
  delivery_status: Type.Enum([...EVENT_STATUSES], { description: 'Its delivery to the issue\'s destination, now' }),
  attempt_count: Type.Integer({ description: 'Attempts of that delivery' }),
  last_failed_at: Timestamp,
  last_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
});

export const IssueEventPage = Page(IssueEventSchema);
export const IssueEventQuery = Type.Object(PageQuery, { additionalProperties: false });

/** `POST /v1/issues/{id}/retry`: the issue after, and how many deliveries were queued. */
export const IssueRetryResultSchema = Type.Object({
  issue: IssueSchema,
  queued: Type.Integer({ description: 'Deliveries queued for a replay attempt (those of covered events not yet delivered)' }),
});
