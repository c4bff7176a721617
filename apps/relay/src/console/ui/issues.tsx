// The issues pages (docs/issues.md): failed deliveries grouped by destination and kind of
// failure. The list (#/issues?status=…) has a tab per status; one issue (#/issues/<id>)
// shows its facts and events, and acts on it: acknowledge, resolve, retry every event it
// covers with the progress read back from the issue itself.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { call, type Endpoint, type Issue, type IssueEvent, type Page } from './api.ts';
import { ConfirmButton } from './dialog.tsx';
import { StatusBadge } from './inspector.tsx';
import { RelativeTime } from './time.tsx';

const STATUS_TABS = [
  { status: 'open', label: 'Open' },
  { status: 'acknowledged', label: 'Acknowledged' },
  { status: 'resolved', label: 'Resolved' },
] as const;
const PAGE_SIZE = 50;
/** How often a retry's progress is read: the issue's counts are one indexed query on the relay. */
const RETRY_POLL_MS = 1_000;
/**
 * How long the progress is followed: the retry's attempts run in the background, and once
 * all are delivered the relay's sweep (every 5 s) marks the issue resolved.
 */
const RETRY_FOLLOW_MS = 5 * 60_000;

const ISSUE_TONES: Record<Issue['status'], string> = { open: 'error', acknowledged: 'warn', resolved: 'ok' };

/** An issue's status as a badge: the word and a shape, the colour only beside them. */
export function IssueStatusBadge({ status }: { status: Issue['status'] }) {
  return <span class={`badge issue-status ${ISSUE_TONES[status] ?? ''}`} data-status={status}>{status}</span>;
}

/** Destination id -> "orders → https://…": how a person knows it. */
function useDestinationNames(): Map<string, string> {
  const [names, setNames] = useState(new Map<string, string>());
  useEffect(() => {
    const controller = new AbortController();
    call<Page<Endpoint>>('GET', '/v1/endpoints?limit=100', undefined, controller.signal).then((page) => {
      const found = new Map<string, string>();
      for (const endpoint of page.data) {
        for (const destination of endpoint.destinations ?? []) {
          found.set(destination.id, `${endpoint.name} → ${'url' in destination.destination ? destination.destination.url : 'hook listen'}`);
        }
      }
      setNames(found);
    }, () => {});
    return () => controller.abort();
  }, []);
  return names;
}

function statusOf(hash: string): Issue['status'] {
  const status = new URLSearchParams(hash.split('?')[1] ?? '').get('status');
  return STATUS_TABS.some((tab) => tab.status === status) ? (status as Issue['status']) : 'open';
}

function lastAnswer(status: number | null, error: string | null): string {
  if (status !== null) return `answered ${status}`;
  return error ?? '—';
}

export function IssuesPage({ hash }: { hash: string }) {
  const status = statusOf(hash);
  const names = useDestinationNames();
  const [issues, setIssues] = useState<Issue[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const controller = new AbortController();
    setIssues(null);
    setError('');
    call<Page<Issue>>('GET', `/v1/issues?status=${status}&limit=${PAGE_SIZE}`, undefined, controller.signal).then((page) => {
      setIssues(page.data);
      setCursor(page.next_cursor);
    }, (failure) => { if (!controller.signal.aborted) setError((failure as Error).message); });
    return () => controller.abort();
  }, [status]);
  const more = async () => {
    if (!cursor) return;
    try {
      const page = await call<Page<Issue>>('GET', `/v1/issues?status=${status}&limit=${PAGE_SIZE}&cursor=${encodeURIComponent(cursor)}`);
      setIssues((current) => [...(current ?? []), ...page.data]);
      setCursor(page.next_cursor);
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  return (
    <main id="main" class="issues-page">
      <h1>Issues</h1>
      <p class="quiet">Failed deliveries grouped by destination and kind of failure. Once the receiver is fixed, open an issue and retry every event it covers.</p>
      <nav class="issue-tabs" aria-label="Issue status">
        {STATUS_TABS.map((tab) => (
          <a key={tab.status} href={`#/issues?status=${tab.status}`} aria-current={tab.status === status ? 'page' : undefined}>{tab.label}</a>
        ))}
      </nav>
      <p class="error" role="alert">{error}</p>
      {issues === null && !error && <p class="quiet">Loading…</p>}
      {issues !== null && issues.length === 0 && (
        <p class="quiet" id="issues-empty">{status === 'resolved' ? 'No resolved issues.' : `No ${status} issues: every destination is delivering.`}</p>
      )}
      {issues !== null && issues.length > 0 && (
        <div class="scroll">
          <table id="issue-list" class="issue-table">
            <caption class="visually-hidden">{STATUS_TABS.find((tab) => tab.status === status)!.label} issues, most recently seen first</caption>
            <thead>
              <tr>
                <th scope="col">Problem</th><th scope="col">Status</th><th scope="col">Destination</th>
                <th scope="col" class="number">Events</th><th scope="col" class="number">Failures</th>
                <th scope="col">First seen</th><th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {issues.map((issue) => (
                <tr key={issue.id} data-issue-id={issue.id}>
                  <th scope="row"><a href={`#/issues/${issue.id}`}>{issue.title}</a></th>
                  <td><IssueStatusBadge status={issue.status} /></td>
                  <td class="destination-cell">{names.get(issue.destination_id) ?? <span class="mono">{issue.destination_id}</span>}</td>
                  <td class="number">{issue.event_count}</td>
                  <td class="number">{issue.failure_count}</td>
                  <td><RelativeTime iso={issue.first_seen_at} /></td>
                  <td><RelativeTime iso={issue.last_seen_at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && <button type="button" id="more-issues" onClick={more}>More issues</button>}
    </main>
  );
}

/** What a retry is doing: not started, following the issue's counts, or finished (with or without failures). */
type RetryState =
  | { phase: 'idle' }
  | { phase: 'running'; queued: number }
  | { phase: 'done'; queued: number; failing: number };

export function IssuePage({ id }: { id: string }) {
  const names = useDestinationNames();
  const [issue, setIssue] = useState<Issue | null>(null);
  const [events, setEvents] = useState<IssueEvent[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const [retry, setRetry] = useState<RetryState>({ phase: 'idle' });
  const following = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const loadEvents = useCallback(async () => {
    const page = await call<Page<IssueEvent>>('GET', `/v1/issues/${id}/events?limit=${PAGE_SIZE}`);
    setEvents(page.data);
    setCursor(page.next_cursor);
  }, [id]);
  useEffect(() => {
    const controller = new AbortController();
    Promise.all([
      call<Issue>('GET', `/v1/issues/${id}`, undefined, controller.signal),
      call<Page<IssueEvent>>('GET', `/v1/issues/${id}/events?limit=${PAGE_SIZE}`, undefined, controller.signal),
    ]).then(([loaded, page]) => {
      setIssue(loaded);
      setEvents(page.data);
      setCursor(page.next_cursor);
    }, (failure) => { if (!controller.signal.aborted) setError((failure as Error).message); });
    return () => { controller.abort(); clearTimeout(following.current); };
  }, [id]);

  const act = async (action: 'acknowledge' | 'resolve') => {
    setNote('');
    try {
      const changed = await call<Issue>('POST', `/v1/issues/${id}/${action}`, {});
      setIssue(changed);
      setNote(action === 'acknowledge' ? 'Acknowledged: new failures still count here but no longer alert.' : 'Resolved. A new failure of this kind reopens it.');
    } catch (failure) {
      setError((failure as Error).message);
    }
  };

  /** Reads the issue every RETRY_POLL_MS until the retry has run its course (or RETRY_FOLLOW_MS pass). */
  const follow = (queued: number, until: number) => {
    following.current = setTimeout(async () => {
      try {
        const current = await call<Issue>('GET', `/v1/issues/${id}`);
        setIssue(current);
        const attempted = current.events.pending === 0;
        // Every event delivered: the sweep resolves the issue within seconds, so keep reading until it has.
        const allDelivered = current.events.failing === 0 && attempted;
        if (current.status === 'resolved' || (attempted && !allDelivered) || Date.now() >= until) {
          // The events first, so "Done" appears with the table it speaks of.
          await loadEvents().catch(() => {});
          setRetry({ phase: 'done', queued, failing: current.status === 'resolved' ? 0 : current.events.failing });
          return;
        }
      } catch (failure) {
        // A passing failure (a restart): the next read tries again.
        setNote((failure as Error).message);
      }
      follow(queued, until);
    }, RETRY_POLL_MS);
  };

  const retryAll = async () => {
    const result = await call<{ issue: Issue; queued: number }>('POST', `/v1/issues/${id}/retry`, {});
    setIssue(result.issue);
    setNote('');
    setRetry({ phase: 'running', queued: result.queued });
    clearTimeout(following.current);
    follow(result.queued, Date.now() + RETRY_FOLLOW_MS);
  };

  const more = async () => {
    if (!cursor) return;
    try {
      const page = await call<Page<IssueEvent>>('GET', `/v1/issues/${id}/events?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(cursor)}`);
      setEvents((current) => [...current, ...page.data]);
      setCursor(page.next_cursor);
    } catch (failure) {
      setError((failure as Error).message);
    }
  };

  if (!issue) {
    return (
      <main id="main">
        <p><a href="#/issues">← All issues</a></p>
        <h1>Issue</h1>
        {error ? <p class="error" role="alert">{error}</p> : <p class="quiet">Loading…</p>}
      </main>
    );
  }
  const destination = names.get(issue.destination_id);
  const toRetry = issue.events.total - issue.events.delivered;
  return (
    <main id="main" class="issue-page">
      <p><a href="#/issues">← All issues</a></p>
      <h1 class="issue-title">{issue.title} <IssueStatusBadge status={issue.status} /></h1>
      <dl class="facts issue-facts">
        <div><dt>Destination</dt><dd>{destination ?? ''} <a class="mono" href={`#/endpoints/${issue.endpoint_id}`}>{issue.destination_id}</a></dd></div>
        <div><dt>Kind</dt><dd class="mono">{issue.kind}</dd></div>
        <div><dt>Last answer</dt><dd>{lastAnswer(issue.last_status, issue.last_error)} (<a href={`#/events/${issue.last_event_id}`} class="mono">{issue.last_event_id}</a>)</dd></div>
        <div><dt>Failures</dt><dd>{issue.failure_count} failed {issue.failure_count === 1 ? 'attempt' : 'attempts'} over {issue.event_count} {issue.event_count === 1 ? 'event' : 'events'}</dd></div>
        <div><dt>Events now</dt><dd id="issue-progress-counts">{issue.events.delivered} of {issue.events.total} delivered, {issue.events.failing} failing, {issue.events.pending} pending</dd></div>
        <div><dt>First seen</dt><dd><RelativeTime iso={issue.first_seen_at} /></dd></div>
        <div><dt>Last seen</dt><dd><RelativeTime iso={issue.last_seen_at} /></dd></div>
        <div><dt>Opened</dt><dd><RelativeTime iso={issue.opened_at} />{issue.reopen_count > 0 && ` (reopened ${issue.reopen_count} ${issue.reopen_count === 1 ? 'time' : 'times'})`}</dd></div>
        {issue.acknowledged_at && <div><dt>Acknowledged</dt><dd><RelativeTime iso={issue.acknowledged_at} /></dd></div>}
        {issue.resolved_at && <div><dt>Resolved</dt><dd><RelativeTime iso={issue.resolved_at} /> {issue.resolved_by === 'auto' ? '(every event delivered)' : '(by hand)'}</dd></div>}
      </dl>
      <div class="toolbar issue-actions">
        {issue.status === 'open' && <button type="button" id="acknowledge-issue" onClick={() => act('acknowledge')}>Acknowledge</button>}
        {issue.status !== 'resolved' && <button type="button" id="resolve-issue" onClick={() => act('resolve')}>Resolve</button>}
        {toRetry > 0 && retry.phase !== 'running' && (
          <ConfirmButton
            label={`Retry all ${toRetry} ${toRetry === 1 ? 'event' : 'events'}`}
            class="primary retry-issue"
            danger={false}
            title={`Retry ${toRetry} ${toRetry === 1 ? 'event' : 'events'}?`}
            confirmLabel="Retry now"
            onConfirm={retryAll}
          >
            <p>Each event this issue covers that is not delivered yet gets one more attempt to {destination ?? issue.destination_id}, now. Fix the receiver first: events that fail again stay in the issue.</p>
          </ConfirmButton>
        )}
      </div>
      <p class="quiet" role="status" id="issue-note">{note}</p>
      {retry.phase !== 'idle' && (
        <div class="retry-progress" id="retry-progress" role="status">
          <label for="retry-progress-bar">
            {retry.phase === 'running'
              ? `Retrying ${retry.queued} ${retry.queued === 1 ? 'event' : 'events'}: ${issue.events.delivered} of ${issue.events.total} delivered`
              : retry.failing === 0
                ? `Done: ${issue.events.delivered} of ${issue.events.total} delivered${issue.status === 'resolved' ? '; the issue is resolved' : ''}.`
                : `Done: ${issue.events.delivered} of ${issue.events.total} delivered, ${retry.failing} still failing (listed below).`}
          </label>
          <progress id="retry-progress-bar" max={Math.max(1, issue.events.total)} value={issue.events.delivered}>{issue.events.delivered}/{issue.events.total}</progress>
        </div>
      )}
      <h2>Events</h2>
      <p class="quiet">Newest failure first, each with its delivery to this destination.</p>
      {events.length === 0 ? <p class="quiet">No events kept: retention has dropped them.</p> : (
        <div class="scroll">
          <table id="issue-events" class="issue-table">
            <caption class="visually-hidden">Events this issue covers</caption>
            <thead>
              <tr>
                <th scope="col">Event</th><th scope="col">Type</th><th scope="col">Delivery</th><th scope="col" class="number">Attempts</th>
                <th scope="col">Last failed</th><th scope="col">Its answer</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.event_id} data-event-id={event.event_id}>
                  <th scope="row"><a href={`#/events/${event.event_id}`} class="mono">{event.event_id}</a></th>
                  <td>{event.type ?? '(no type)'}</td>
                  <td><StatusBadge status={event.delivery_status} /></td>
                  <td class="number">{event.attempt_count}</td>
                  <td><RelativeTime iso={event.last_failed_at} /></td>
                  <td>{lastAnswer(event.last_status, event.last_error)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && <button type="button" id="more-issue-events" onClick={more}>More events</button>}
    </main>
  );
}
