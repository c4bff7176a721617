import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { decodeCursor, DESTINATION_NOT_FOUND, encodeCursor, ENDPOINT_NOT_FOUND, HookError, INVALID_CURSOR, ISSUE_NOT_FOUND, LIST_LIMIT_DEFAULT, type IssueStatus } from '@hook/core';
import { acknowledgeIssue, Destination, Endpoint, getIssue, listIssueEvents, listIssues, resolveIssue, retryIssue, type IssueRecord } from '@hook/db';
import { errorResponses, IssueEventPage, IssueEventQuery, IssueListQuery, IssuePage, IssueParams, IssueRetryResultSchema, IssueSchema } from '../../schemas.ts';
import { BULK_REPLAY_MAX } from '../events/index.ts';
import { fetchSize } from '../pagination.ts';

const security = [{ bearerAuth: [] }];

/** The id inside a page cursor (an issue's or an event's), or nothing on the first page. */
function lastIdOf(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const lastId = decodeCursor(cursor);
  if (!lastId) throw new HookError(INVALID_CURSOR, [JSON.stringify(cursor.slice(0, 40))]);
  return lastId;
}

/** `{data, next_cursor}` from rows read with fetchSize: the cursor is the page's last id. */
function page<Row>(rows: Row[], limit: number | undefined, idOf: (row: Row) => string): { data: Row[]; next_cursor: string | null } {
  const size = limit ?? LIST_LIMIT_DEFAULT;
  const data = rows.slice(0, size);
  return { data, next_cursor: rows.length > size ? encodeCursor(idOf(data.at(-1)!)) : null };
}

function found(issue: IssueRecord | null, id: string): IssueRecord {
  if (!issue) throw new HookError(ISSUE_NOT_FOUND, [id]);
  return issue;
}

/**
 * Issues (docs/issues.md): failed deliveries grouped by destination and kind of failure.
 * Any member reads them and acts on them (acknowledge, resolve, retry): none of it
 * changes who may do what, only what the account is told and what is retried.
 */
export async function issueRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get('/v1/issues', {
    schema: {
      tags: ['issues'],
      summary: 'List issues (failed deliveries grouped by destination and kind of failure), most recently seen first; by default those open or acknowledged',
      security,
      querystring: IssueListQuery,
      response: { 200: IssuePage, ...errorResponses },
    },
  }, async (request) => {
    const { status, endpoint_id: endpointId, destination_id: destinationId, kind, limit, cursor } = request.query;
    // A filter naming an endpoint or destination the account does not have (another account's, or the hidden
    // notifications endpoint's) is refused as not found, as GET /v1/events does, rather than listing nothing.
    // Deleted ones are still found: their issues stay listed.
    if (endpointId !== undefined && (await request.em.count(Endpoint, { id: endpointId, accountId: request.accountId, kind: 'user' })) === 0) {
      throw new HookError(ENDPOINT_NOT_FOUND, [endpointId]);
    }
    if (destinationId !== undefined) {
      const destination = await request.em.findOne(Destination, { id: destinationId, accountId: request.accountId });
      if (!destination || (await request.em.count(Endpoint, { id: destination.endpointId, accountId: request.accountId, kind: 'user' })) === 0) {
        throw new HookError(DESTINATION_NOT_FOUND, [destinationId, '']);
      }
    }
    const statuses = status === undefined ? undefined : ([...new Set(status.split(','))] as IssueStatus[]);
    const rows = await listIssues(request.em, {
      accountId: request.accountId, ...(statuses ? { statuses } : {}), endpointId, destinationId, kind, limit: fetchSize(limit), afterId: lastIdOf(cursor),
    });
    return page(rows, limit, (issue) => issue.id);
  });

  api.get('/v1/issues/:id', {
    schema: {
      tags: ['issues'],
      summary: 'An issue, with how the deliveries of the events it covers stand now',
      security,
      params: IssueParams,
      response: { 200: IssueSchema, ...errorResponses },
    },
  }, async (request) => found(await getIssue(request.em, request.accountId, request.params.id), request.params.id));

  api.get('/v1/issues/:id/events', {
    schema: {
      tags: ['issues'],
      summary: 'The events an issue covers, newest failure first, each with its delivery to the issue\'s destination now',
      security,
      params: IssueParams,
      querystring: IssueEventQuery,
      response: { 200: IssueEventPage, ...errorResponses },
    },
  }, async (request) => {
    const { id } = request.params;
    const { limit, cursor } = request.query;
    const afterEventId = lastIdOf(cursor);
    const rows = await listIssueEvents(request.em, request.accountId, id, { limit: fetchSize(limit), afterEventId });
    // an unknown issue has no events; one with none left (retention) is still found
    if (rows.length === 0) found(await getIssue(request.em, request.accountId, id), id);
    return page(rows, limit, (event) => event.event_id);
  });

  api.post('/v1/issues/:id/acknowledge', {
    schema: {
      tags: ['issues'],
      summary: 'Acknowledge an issue: someone is on it, so new failures no longer alert. Idempotent; a resolved issue stays resolved',
      security,
      params: IssueParams,
      response: { 200: IssueSchema, ...errorResponses },
    },
  }, async (request) => found(await acknowledgeIssue(request.em, request.accountId, request.params.id), request.params.id));

  api.post('/v1/issues/:id/resolve', {
    schema: {
      tags: ['issues'],
      summary: 'Resolve an issue (resolved_by user). Idempotent. A new failure of the same kind at the same destination reopens it',
      security,
      params: IssueParams,
      response: { 200: IssueSchema, ...errorResponses },
    },
  }, async (request) => found(await resolveIssue(request.em, request.accountId, request.params.id), request.params.id));

  api.post('/v1/issues/:id/retry', {
    schema: {
      tags: ['issues'],
      summary: `Retry an issue: one replay attempt of every covered event whose delivery to the issue's destination is not delivered, to that destination only (at most ${BULK_REPLAY_MAX.toLocaleString('en')}, oldest first). Follow issue.events; once all are delivered the issue resolves itself (resolved_by auto)`,
      security,
      params: IssueParams,
      response: { 200: IssueRetryResultSchema, ...errorResponses },
    },
  }, async (request) => {
    const { id } = request.params;
    const retried = await retryIssue(app.orm, request.accountId, id, BULK_REPLAY_MAX);
    if (!retried) throw new HookError(ISSUE_NOT_FOUND, [id]);
    return retried;
  });
}
