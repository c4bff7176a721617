// The events pages: the list with its filters (#/events?…) and one event (#/events/<id>).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { call, type Endpoint, type HookEvent, type Page } from './api.ts';
import { Inspector, StatusBadge } from './inspector.tsx';
import { curlCommand } from './format.ts';
import { copyText } from './clipboard.ts';
import { useStream } from './stream.ts';
import { useEndpoints } from './endpoints.tsx';

/** Events kept in the live list; older ones are dropped from the page (still a click on "Older" away). */
const LIVE_LIST_MAX = 500;
const PAGE_SIZE = 50;

interface Filters { endpoint_id: string; status: string; type: string; q: string; since: string; until: string }
const NO_FILTERS: Filters = { endpoint_id: '', status: '', type: '', q: '', since: '', until: '' };

function filtersFromHash(hash: string): Filters {
  const params = new URLSearchParams(hash.split('?')[1] ?? '');
  return { ...NO_FILTERS, ...Object.fromEntries([...params].filter(([name]) => name in NO_FILTERS)) };
}

function queryOf(filters: Filters, cursor?: string, limit = PAGE_SIZE): string {
  const params = new URLSearchParams({ limit: String(limit) });
  for (const [name, value] of Object.entries(filters)) {
    if (!value) continue;
    params.set(name, name === 'since' || name === 'until' ? new Date(value).toISOString() : value);
  }
  if (cursor) params.set('cursor', cursor);
  return params.toString();
}

/** How long one page of the list follows next_cursor before it shows what it found (fillEventPage). */
const PAGE_FILL_BUDGET_MS = 5_000;

type EventPage = Page<HookEvent> & { search_truncated?: boolean };

/**
 * Up to PAGE_SIZE events from `cursor` on. With filters the relay looks through at most
 * 1,000 events a request, and may answer short, even empty, with a next_cursor
 * (docs/api.md#get-v1events): this follows it, asking for what is still missing, until the
 * page is full, the list ends, or PAGE_FILL_BUDGET_MS has passed. (@hook/client's fillPage
 * does the same for the CLI and MCP; the browser bundle does not carry that client.)
 */
async function fillEventPage(filters: Filters, cursor?: string): Promise<EventPage> {
  const deadline = Date.now() + PAGE_FILL_BUDGET_MS;
  const data: HookEvent[] = [];
  for (;;) {
    const page = await call<EventPage>('GET', `/v1/events?${queryOf(filters, cursor, PAGE_SIZE - data.length)}`);
    data.push(...page.data);
    if (page.next_cursor === null || data.length >= PAGE_SIZE || Date.now() >= deadline) return { ...page, data };
    cursor = page.next_cursor;
  }
}

/** Whether a live event belongs in the list the filters describe (search results are not live). */
function matches(event: HookEvent, filters: Filters): boolean {
  if (filters.q || filters.until) return false;
  if (filters.endpoint_id && event.endpoint_id !== filters.endpoint_id) return false;
  if (filters.status && event.status !== filters.status) return false;
  if (filters.type && event.type !== filters.type) return false;
  if (filters.since && new Date(event.received_at) < new Date(filters.since)) return false;
  return true;
}

export function EventsPage({ hash }: { hash: string }) {
  const endpoints = useEndpoints();
  const filters = filtersFromHash(hash);
  const filterKey = JSON.stringify(filters);
  const [events, setEvents] = useState<HookEvent[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  // The last page stopped looking (its time ran out) with older events left to look through.
  const [stoppedEarly, setStoppedEarly] = useState(false);
  const [waiting, setWaiting] = useState<HookEvent[]>([]);
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const pendingLive = useRef<HookEvent[]>([]);
  const frame = useRef(0);

  useEffect(() => {
    setError('');
    setWaiting([]);
    fillEventPage(filters).then((page) => {
      setEvents(page.data);
      setCursor(page.next_cursor);
      setStoppedEarly(page.next_cursor !== null && page.data.length < PAGE_SIZE);
    }, (failure) => setError(failure.message));
  }, [filterKey]);

  // Live events are batched per animation frame; while the reader is scrolled down they wait behind a button, so the list never moves under them.
  const flush = useCallback(() => {
    frame.current = 0;
    const arrived = pendingLive.current.splice(0).reverse();
    if (arrived.length === 0) return;
    if (window.scrollY > 80) setWaiting((current) => [...arrived, ...current].slice(0, LIVE_LIST_MAX));
    else setEvents((current) => [...arrived, ...current].slice(0, Math.max(LIVE_LIST_MAX, current.length)));
  }, []);
  useStream((message) => {
    if (message.type === 'event.received' && matches(message.event, filters)) {
      pendingLive.current.push(message.event);
      if (!frame.current) frame.current = requestAnimationFrame(flush);
    }
    if (message.type === 'attempt.finished') {
      const update = (list: HookEvent[]) => list.some((event) => event.id === message.event_id)
        ? list.map((event) => event.id === message.event_id ? { ...event, status: message.event_status, attempt_count: (event.attempt_count ?? 0) + 1 } : event)
        : list;
      // The event may still wait for the next frame (an attempt can finish within a frame of its arrival).
      pendingLive.current = update(pendingLive.current);
      setEvents(update);
      setWaiting(update);
    }
  });

  const apply = (submitEvent: Event) => {
    submitEvent.preventDefault();
    const data = new FormData(submitEvent.currentTarget as HTMLFormElement);
    const params = new URLSearchParams();
    for (const name of Object.keys(NO_FILTERS)) {
      const value = String(data.get(name) ?? '').trim();
      if (value) params.set(name, value);
    }
    location.hash = `#/events${params.size ? `?${params}` : ''}`;
  };
  const older = async () => {
    if (!cursor) return;
    const page = await fillEventPage(filters, cursor);
    setEvents((current) => [...current, ...page.data.filter((event) => !current.some((shown) => shown.id === event.id))]);
    setCursor(page.next_cursor);
    setStoppedEarly(page.next_cursor !== null && page.data.length < PAGE_SIZE);
  };
  const replayFailed = async () => {
    setNote('');
    try {
      const body: Record<string, string> = { status: 'failed' };
      if (filters.endpoint_id) body.endpoint_id = filters.endpoint_id;
      const result = await call('POST', '/v1/events/replay', body);
      setNote(`Replaying ${result.replayed} failed ${result.replayed === 1 ? 'event' : 'events'} (${result.deliveries} ${result.deliveries === 1 ? 'delivery' : 'deliveries'}); their status changes here as the attempts finish.`);
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const names = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint.name]));

  return (
    <main id="main">
      <h1>Events</h1>
      <form id="filters" class="filters" onSubmit={apply} key={filterKey}>
        <label>Endpoint
          <select name="endpoint_id" value={filters.endpoint_id}>
            <option value="">All endpoints</option>
            {endpoints.map((endpoint) => <option key={endpoint.id} value={endpoint.id}>{endpoint.name}</option>)}
          </select>
        </label>
        <label>Status
          <select name="status" value={filters.status}>
            <option value="">Any status</option>
            {['pending', 'delivered', 'retrying', 'failed', 'filtered'].map((status) => <option key={status} value={status}>{status}</option>)}
          </select>
        </label>
        <label>Type <input name="type" type="text" value={filters.type} placeholder="invoice.paid" /></label>
        <label>Search payloads <input name="q" type="search" value={filters.q} placeholder="text in the body" /></label>
        <label>Since <input name="since" type="datetime-local" value={filters.since} /></label>
        <label>Until <input name="until" type="datetime-local" value={filters.until} /></label>
        <div class="filter-actions">
          <button type="submit">Apply filters</button>
          <a href="#/events" class="button-link">Clear</a>
        </div>
      </form>
      <div class="toolbar">
        <button type="button" id="replay-failed" onClick={replayFailed}>Replay failed events{filters.endpoint_id ? ' of this endpoint' : ''}</button>
      </div>
      <p class="error" role="alert">{error}</p>
      <p id="bulk-note" class="quiet" role="status">{note}</p>
      {waiting.length > 0 && (
        <button type="button" id="show-new" class="new-events" onClick={() => { setEvents((current) => [...waiting, ...current]); setWaiting([]); window.scrollTo(0, 0); }}>
          {waiting.length} new {waiting.length === 1 ? 'event' : 'events'}: show
        </button>
      )}
      {stoppedEarly && <p class="quiet" id="search-truncated">Stopped looking after {PAGE_FILL_BUDGET_MS / 1000} s with older events still to look through: Older events looks further back, or narrow the list with Since and Until.</p>}
      {events.length === 0 && !error && !stoppedEarly && <p class="quiet" id="events-empty">No events{filters.q || filters.type || filters.status ? ' match these filters' : ' yet'}. Send one to an endpoint's ingest URL; it appears here at once.</p>}
      <ol id="event-list" class="event-list" aria-label="Events, newest first">
        {events.map((event) => (
          <li key={event.id} data-event-id={event.id}>
            <a href={`#/events/${event.id}`}>
              <span class="event-type">{event.type ?? '(no type)'}</span>
              <span class="mono quiet">{event.method} {event.path || '/'}</span>
              <StatusBadge status={event.status} />
              <span class="quiet">{names.get(event.endpoint_id ?? '') ?? event.endpoint_id}</span>
              <time dateTime={event.received_at}>{new Date(event.received_at).toLocaleString()}</time>
            </a>
          </li>
        ))}
      </ol>
      {cursor && <button type="button" id="older" onClick={older}>Older events</button>}
    </main>
  );
}

export function EventPage({ id }: { id: string }) {
  const [event, setEvent] = useState<HookEvent | null>(null);
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const [replayState, setReplayState] = useState<Record<string, string>>({});
  const load = useCallback(async () => {
    try {
      const loaded = await call<HookEvent>('GET', `/v1/events/${id}`);
      setEvent(loaded);
      if (loaded.endpoint_id) setEndpoint(await call<Endpoint>('GET', `/v1/endpoints/${loaded.endpoint_id}`).catch(() => null));
    } catch (failure) {
      setError((failure as Error).message);
    }
  }, [id]);
  useEffect(() => { load(); }, [load]);
  useStream((message) => {
    if (message.type !== 'attempt.finished' || message.event_id !== id) return;
    const attempt = message.attempt;
    setReplayState((state) => {
      const destinationId = attempt.destination_id ?? Object.keys(state).find((key) => state[key]?.startsWith('Sent') || state[key] === 'sending');
      if (!destinationId) return state;
      return { ...state, [destinationId]: `Replay finished: ${attempt.response_status ?? 'no answer'}${attempt.error ? ` (${attempt.error})` : ''} in ${attempt.duration_ms} ms; the event is ${message.event_status}.` };
    });
    load();
  });
  const replay = async (destinationId: string) => {
    setReplayState((state) => ({ ...state, [destinationId]: 'sending' }));
    try {
      const result = await call('POST', `/v1/events/replay/${id}`, { destination_id: destinationId });
      const outcome = result.replay?.find((entry: { destination_id: string }) => entry.destination_id === destinationId)?.outcome;
      const words: Record<string, string> = {
        attempted: 'Sent; the result appears below as it arrives.',
        sent_to_listener: 'Sent to the connected hook listen; its answer appears below as it arrives.',
        waiting_for_listener: 'Queued: no hook listen is connected; the next one gets it first.',
        in_flight: 'An attempt was already running; none was queued.',
      };
      setReplayState((state) => (state[destinationId] === 'sending' ? { ...state, [destinationId]: words[outcome] ?? `Replay: ${outcome}` } : state));
      setEvent(result);
    } catch (failure) {
      setReplayState((state) => ({ ...state, [destinationId]: (failure as Error).message }));
    }
  };
  if (error) return <main id="main"><h1>Event</h1><p class="error" role="alert">{error}</p><p><a href="#/events">All events</a></p></main>;
  if (!event) return <main id="main"><h1>Event</h1><p class="quiet">Loading…</p></main>;
  const curl = endpoint ? curlCommand(event, endpoint.url) : '';
  return (
    <main id="main">
      <p><a href="#/events">← All events</a></p>
      <h1 class="event-title">{event.type ?? '(no type)'} <span class="mono quiet">{event.id}</span></h1>
      <Inspector
        event={event}
        endpointName={endpoint?.name}
        onReplay={replay}
        replayState={replayState}
        actions={endpoint && (
          <div class="toolbar">
            <button type="button" id="copy-curl" onClick={() => copyText(curl, setNote)}>Copy as curl</button>
            <span class="quiet" role="status">{note}</span>
            <details class="curl"><summary>Show the curl command</summary><pre id="curl-command" tabIndex={0}>{curl}</pre></details>
          </div>
        )}
      />
    </main>
  );
}

