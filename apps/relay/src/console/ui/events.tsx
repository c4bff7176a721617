// The events page: the list (#/events?filters) and one event's inspector
// (#/events/<id>?filters) side by side on wide screens, the inspector in place of the
// list on narrow ones. Both routes render EventsRoute, so opening an event keeps the
// list as it is (no refetch). The selection lives in the hash: j/k replace it (no
// history entry per step), a click or Enter pushes it (Back returns), Esc closes it.
import { Component } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { call, type Endpoint, type HookEvent, type Page } from './api.ts';
import { Inspector, StatusBadge } from './inspector.tsx';
import { curlCommand, formatSize } from './format.ts';
import { CopyButton } from './copy.tsx';
import { useStream } from './stream.ts';
import { RelativeTime } from './time.tsx';
import type { RouteProps } from './routes.tsx';

/** Events kept in the live list; older ones are dropped from the page (still a click on "Older" away). */
const LIVE_LIST_MAX = 500;
const PAGE_SIZE = 50;
/** Event details kept for j/k and Back: the neighbours of the selection are fetched ahead. */
const DETAILS_MAX = 200;
/** How long the selection rests before its neighbours are fetched (holding j fetches nothing extra). */
const PREFETCH_DELAY_MS = 120;

const details = new Map<string, HookEvent>();
const loading = new Map<string, Promise<HookEvent>>();

function remember(event: HookEvent): void {
  details.delete(event.id);
  details.set(event.id, event);
  if (details.size > DETAILS_MAX) details.delete(details.keys().next().value!);
}

/** One event's detail, from the cache or the relay (one request per id at a time). */
function loadDetail(id: string, signal?: AbortSignal): Promise<HookEvent> {
  const shared = loading.get(id);
  if (shared) return shared;
  const request = call<HookEvent>('GET', `/v1/events/${id}`, undefined, signal)
    .then((event) => { remember(event); return event; })
    .finally(() => loading.delete(id));
  loading.set(id, request);
  return request;
}

function prefetch(id: string | undefined): void {
  if (id && !details.has(id) && !loading.has(id)) loadDetail(id).catch(() => {});
}

/** Finished events do not change (replays and attempts come through the stream, which drops them from the cache). */
function settled(event: HookEvent): boolean {
  return event.status === 'delivered' || event.status === 'failed' || event.status === 'filtered';
}

let endpointsCache: Endpoint[] | undefined;

/** The account's endpoints (names for the rows, ingest URLs for curl); loaded once a session. */
export function useEndpoints(): Endpoint[] {
  const [endpoints, setEndpoints] = useState<Endpoint[]>(endpointsCache ?? []);
  useEffect(() => {
    call<Page<Endpoint>>('GET', '/v1/endpoints?limit=100').then((page) => { endpointsCache = page.data; setEndpoints(page.data); }, () => {});
  }, []);
  return endpoints;
}

interface Filters { endpoint_id: string; status: string; type: string; q: string; since: string; until: string }
const NO_FILTERS: Filters = { endpoint_id: '', status: '', type: '', q: '', since: '', until: '' };

function filtersFromQuery(query: string): Filters {
  return { ...NO_FILTERS, ...Object.fromEntries([...new URLSearchParams(query)].filter(([name]) => name in NO_FILTERS)) };
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
async function fillEventPage(filters: Filters, cursor: string | undefined, signal: AbortSignal): Promise<EventPage> {
  const deadline = Date.now() + PAGE_FILL_BUDGET_MS;
  const data: HookEvent[] = [];
  for (;;) {
    const page = await call<EventPage>('GET', `/v1/events?${queryOf(filters, cursor, PAGE_SIZE - data.length)}`, undefined, signal);
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

function isAbort(failure: unknown): boolean {
  return failure instanceof DOMException && failure.name === 'AbortError';
}

interface RowProps { event: HookEvent; endpointName: string | undefined; selected: boolean; tabbable: boolean; onOpen: (id: string) => void }

/** One row; re-rendered only when its event, name or selection changes (j/k touches two rows). */
class EventRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const props = this.props;
    return next.event !== props.event || next.selected !== props.selected || next.tabbable !== props.tabbable || next.endpointName !== props.endpointName;
  }
  render({ event, endpointName, selected, tabbable, onOpen }: RowProps) {
    const attempts = event.attempt_count ?? 0;
    return (
      <li role="option" id={`row-${event.id}`} class="event-row" data-event-id={event.id} aria-selected={selected ? 'true' : 'false'} tabIndex={tabbable ? 0 : -1} onClick={() => onOpen(event.id)}>
        <span class="cell-status"><StatusBadge status={event.status} /></span>
        <span class="cell-type"><span class="event-type">{event.type ?? '(no type)'}</span></span>
        <span class="cell-age"><RelativeTime iso={event.received_at} /></span>
        <span class="cell-meta">
          <span class="event-endpoint">{endpointName ?? event.endpoint_id}</span>
          <span class="mono event-request">{event.method} {event.path || '/'}</span>
        </span>
        <span class="cell-numbers">
          <span class="event-attempts">{attempts} {attempts === 1 ? 'attempt' : 'attempts'}</span>
          <span class="event-size">{formatSize(event.size)}</span>
        </span>
      </li>
    );
  }
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || target.closest('input, textarea, select') !== null);
}

export function EventsRoute({ hash, match }: RouteProps) {
  const selectedId = match[1];
  const query = hash.split('?')[1] ?? '';
  const suffix = query ? `?${query}` : '';
  const endpoints = useEndpoints();
  const filters = filtersFromQuery(query);
  const filterKey = JSON.stringify(filters);
  const [events, setEvents] = useState<HookEvent[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [cursor, setCursor] = useState<string | null>(null);
  // The last page stopped looking (its time ran out) with older events left to look through.
  const [stoppedEarly, setStoppedEarly] = useState(false);
  const [waiting, setWaiting] = useState<HookEvent[]>([]);
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const pendingLive = useRef<HookEvent[]>([]);
  const frame = useRef(0);
  const listAbort = useRef<AbortController | undefined>(undefined);
  // What gets focus once the hash has changed: the selected row (j/k, Esc) or the detail (Enter).
  const focusNext = useRef<{ to: 'row' | 'detail'; id: string } | undefined>(undefined);

  useEffect(() => {
    setError('');
    setWaiting([]);
    setLoaded(false);
    listAbort.current?.abort();
    const controller = new AbortController();
    listAbort.current = controller;
    fillEventPage(filters, undefined, controller.signal).then((page) => {
      setEvents(page.data);
      setCursor(page.next_cursor);
      setStoppedEarly(page.next_cursor !== null && page.data.length < PAGE_SIZE);
      setLoaded(true);
    }, (failure) => { if (!isAbort(failure)) setError(failure.message); });
    return () => controller.abort();
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
      details.delete(message.event_id);
      const update = (list: HookEvent[]) => list.some((event) => event.id === message.event_id)
        ? list.map((event) => event.id === message.event_id ? { ...event, status: message.event_status, attempt_count: (event.attempt_count ?? 0) + 1 } : event)
        : list;
      // The event may still wait for the next frame (an attempt can finish within a frame of its arrival).
      pendingLive.current = update(pendingLive.current);
      setEvents(update);
      setWaiting(update);
    }
  });

  const eventsRef = useRef(events);
  eventsRef.current = events;
  const selectedRef = useRef(selectedId);
  selectedRef.current = selectedId;
  const lastSelected = useRef<string | undefined>(selectedId);
  if (selectedId) lastSelected.current = selectedId;

  const open = useCallback((id: string) => {
    focusNext.current = { to: 'row', id };
    if (id !== selectedRef.current) location.hash = `#/events/${id}${suffix}`;
  }, [suffix]);
  const close = useCallback(() => {
    const id = selectedRef.current;
    if (!id) return;
    focusNext.current = { to: 'row', id };
    location.hash = `#/events${suffix}`;
  }, [suffix]);

  // Focus follows the hash once it has rendered: the row (scrolled into view) or the
  // detail's heading. Closing an event, by Esc, ← Events or the browser's Back, returns
  // to its row. On a narrow screen, where the event hides the list, it goes to the event.
  const shownBefore = useRef(selectedId);
  useLayoutEffect(() => {
    if (shownBefore.current && !selectedId && !focusNext.current) focusNext.current = { to: 'row', id: shownBefore.current };
    shownBefore.current = selectedId;
    const wanted = focusNext.current;
    if (!wanted) return;
    const target = wanted.to === 'detail' ? document.getElementById('detail-heading') : document.getElementById(`row-${wanted.id}`);
    if (!target || target.offsetParent === null) {
      const heading = document.getElementById('detail-heading');
      if (!selectedId || !heading || heading.offsetParent === null) return; // not rendered yet: the next render tries again
      focusNext.current = undefined;
      heading.focus({ preventScroll: true });
      window.scrollTo(0, 0);
      return;
    }
    focusNext.current = undefined;
    target.focus({ preventScroll: true });
    if (wanted.to === 'row') target.scrollIntoView({ block: 'nearest' });
  });

  // Keyboard: j/k (and ↓/↑ in the list) move the selection, Enter opens, Esc closes, / searches.
  useEffect(() => {
    const onKey = (key: KeyboardEvent) => {
      if (key.defaultPrevented || key.ctrlKey || key.metaKey || key.altKey) return;
      const typing = isTyping(key.target);
      if (key.key === 'Escape') {
        if (typing || !selectedRef.current || document.querySelector('dialog[open]')) return;
        key.preventDefault();
        close();
        return;
      }
      if (typing) return;
      const inList = key.target instanceof Element && key.target.closest('#event-list') !== null;
      const list = eventsRef.current;
      const focusedRow = inList ? (key.target as Element).closest('[data-event-id]')?.getAttribute('data-event-id') ?? undefined : undefined;
      const from = list.findIndex((event) => event.id === (focusedRow ?? selectedRef.current));
      const step = (to: number) => {
        const next = list[Math.max(0, Math.min(list.length - 1, to))];
        if (!next) return;
        key.preventDefault();
        focusNext.current = { to: 'row', id: next.id };
        // j/k replace the hash: stepping through a hundred events leaves one history entry.
        if (next.id !== selectedRef.current) location.replace(`#/events/${next.id}${suffix}`);
        else document.getElementById(`row-${next.id}`)?.focus();
      };
      if (key.key === '/') { key.preventDefault(); document.querySelector<HTMLInputElement>('#filters input[name="q"]')?.focus(); }
      else if (key.key === 'j' || (inList && key.key === 'ArrowDown')) step(from + 1);
      else if (key.key === 'k' || (inList && key.key === 'ArrowUp')) step(from === -1 ? 0 : from - 1);
      else if (inList && key.key === 'Home') step(0);
      else if (inList && key.key === 'End') step(list.length - 1);
      else if (inList && key.key === 'Enter' && focusedRow) {
        key.preventDefault();
        focusNext.current = { to: 'detail', id: focusedRow };
        if (focusedRow !== selectedRef.current) location.hash = `#/events/${focusedRow}${suffix}`;
        else document.getElementById('detail-heading')?.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [suffix, close]);

  // The neighbours of the selection are fetched ahead, so j/k shows them at once.
  useEffect(() => {
    if (!selectedId) return;
    const timeout = setTimeout(() => {
      const index = eventsRef.current.findIndex((event) => event.id === selectedId);
      if (index === -1) return;
      prefetch(eventsRef.current[index + 1]?.id);
      prefetch(eventsRef.current[index - 1]?.id);
      prefetch(eventsRef.current[index + 2]?.id);
    }, PREFETCH_DELAY_MS);
    return () => clearTimeout(timeout);
  }, [selectedId, events.length > 0]);

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
    const controller = new AbortController();
    listAbort.current = controller;
    try {
      const page = await fillEventPage(filters, cursor, controller.signal);
      setEvents((current) => {
        const shown = new Set(current.map((event) => event.id));
        return [...current, ...page.data.filter((event) => !shown.has(event.id))];
      });
      setCursor(page.next_cursor);
      setStoppedEarly(page.next_cursor !== null && page.data.length < PAGE_SIZE);
    } catch (failure) {
      if (!isAbort(failure)) setError((failure as Error).message);
    }
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
  const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));
  const tabbableId = events.some((event) => event.id === selectedId) ? selectedId : events[0]?.id;
  const timeFilters = (filters.since ? 1 : 0) + (filters.until ? 1 : 0);

  return (
    <main id="main" class={`events-page${selectedId ? ' has-detail' : ''}`}>
      <section class="list-pane" aria-labelledby="events-heading">
        <div class="pane-head">
          <h1 id="events-heading">Events</h1>
          <button type="button" id="replay-failed" class="small" onClick={replayFailed}>Replay failed{filters.endpoint_id ? ' of this endpoint' : ''}</button>
        </div>
        <form id="filters" class="filters" onSubmit={apply} key={filterKey} role="search" aria-label="Filter events">
          <label class="filter-search">
            <span class="visually-hidden">Search payloads</span>
            <input name="q" type="search" value={filters.q} placeholder="Search payloads" aria-keyshortcuts="/" />
            <kbd aria-hidden="true">/</kbd>
          </label>
          <label><span class="visually-hidden">Endpoint</span>
            <select name="endpoint_id" value={filters.endpoint_id}>
              <option value="">All endpoints</option>
              {endpoints.map((endpoint) => <option key={endpoint.id} value={endpoint.id}>{endpoint.name}</option>)}
            </select>
          </label>
          <label><span class="visually-hidden">Status</span>
            <select name="status" value={filters.status}>
              <option value="">Any status</option>
              {['pending', 'delivered', 'retrying', 'failed', 'filtered'].map((status) => <option key={status} value={status}>{status}</option>)}
            </select>
          </label>
          <label><span class="visually-hidden">Type</span><input name="type" type="text" value={filters.type} placeholder="Type: invoice.paid" /></label>
          <details class="time-range" open={timeFilters > 0}>
            <summary>Time range{timeFilters ? ` (${timeFilters})` : ''}</summary>
            <div class="time-fields">
              <label>Since <input name="since" type="datetime-local" value={filters.since} /></label>
              <label>Until <input name="until" type="datetime-local" value={filters.until} /></label>
            </div>
          </details>
          <div class="filter-actions">
            <button type="submit" class="primary small">Apply</button>
            {query && <a href="#/events" class="button small">Clear</a>}
          </div>
        </form>
        <p class="error" role="alert">{error}</p>
        <p id="bulk-note" class="quiet note" role="status">{note}</p>
        {waiting.length > 0 && (
          <button type="button" id="show-new" class="new-events primary" onClick={() => { setEvents((current) => [...waiting, ...current]); setWaiting([]); window.scrollTo(0, 0); }}>
            {waiting.length} new {waiting.length === 1 ? 'event' : 'events'}: show
          </button>
        )}
        {stoppedEarly && <p class="quiet note" id="search-truncated">Stopped looking after {PAGE_FILL_BUDGET_MS / 1000} s with older events still to look through: Older events looks further back, or narrow the list with Since and Until.</p>}
        {loaded && events.length === 0 && !error && !stoppedEarly && <p class="quiet empty" id="events-empty">No events{filters.q || filters.type || filters.status ? ' match these filters' : ' yet'}. Send one to an endpoint's ingest URL; it appears here at once.</p>}
        {!loaded && !error && <p class="quiet empty" aria-live="polite">Loading events…</p>}
        <ol id="event-list" class="event-list" role="listbox" aria-label="Events, newest first" aria-describedby="list-keys">
          {events.map((event) => (
            <EventRow key={event.id} event={event} endpointName={byId.get(event.endpoint_id ?? '')?.name} selected={event.id === selectedId} tabbable={event.id === tabbableId} onOpen={open} />
          ))}
        </ol>
        <p id="list-keys" class="quiet keys-hint"><kbd>j</kbd> <kbd>k</kbd> move · <kbd>Enter</kbd> opens · <kbd>Esc</kbd> closes · <kbd>/</kbd> searches</p>
        {cursor && <button type="button" id="older" onClick={older}>Older events</button>}
      </section>
      <section class="detail-pane" aria-label="Event detail">
        {selectedId
          ? <EventDetail key={selectedId} id={selectedId} endpoint={(id) => byId.get(id)} listHash={`#/events${suffix}`} onClose={close} />
          : <div class="detail-empty"><p>Select an event to see its deliveries, body and headers.</p><p class="quiet"><kbd>j</kbd>/<kbd>k</kbd> move through the list, <kbd>Enter</kbd> opens, <kbd>Esc</kbd> closes, <kbd>/</kbd> searches.</p></div>}
      </section>
    </main>
  );
}

function EventDetail({ id, endpoint: endpointOf, listHash, onClose }: { id: string; endpoint: (id: string) => Endpoint | undefined; listHash: string; onClose: () => void }) {
  const [event, setEvent] = useState<HookEvent | null>(details.get(id) ?? null);
  const [fetched, setFetched] = useState<Endpoint | null>(null);
  // The event's endpoint could not be fetched (deleted, say): the inspector goes without it.
  const [noEndpoint, setNoEndpoint] = useState(false);
  const [error, setError] = useState('');
  const [replayState, setReplayState] = useState<Record<string, string>>({});
  const abort = useRef<AbortController | undefined>(undefined);
  const load = useCallback(async () => {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    try {
      setEvent(await loadDetail(id, controller.signal));
    } catch (failure) {
      if (!isAbort(failure)) setError((failure as Error).message);
    }
  }, [id]);
  useEffect(() => {
    const cached = details.get(id);
    if (!cached || !settled(cached)) load();
    return () => abort.current?.abort();
  }, [load]);
  const endpoint = event?.endpoint_id ? endpointOf(event.endpoint_id) ?? fetched : null;
  useEffect(() => {
    if (event?.endpoint_id && !endpointOf(event.endpoint_id) && !fetched) call<Endpoint>('GET', `/v1/endpoints/${event.endpoint_id}`).then(setFetched, () => setNoEndpoint(true));
  }, [event?.endpoint_id]);
  // The inspector waits for the endpoint (its name among the facts, curl): arriving later they would move everything below them.
  const ready = event !== null && (!event.endpoint_id || endpoint !== null || noEndpoint);
  useEffect(() => { if (event) document.title = `${event.type ?? 'Event'} · Events · Hook console`; }, [event?.type]);
  useStream((message) => {
    if (message.type !== 'attempt.finished' || message.event_id !== id) return;
    const attempt = message.attempt;
    setReplayState((state) => {
      const destinationId = attempt.destination_id ?? Object.keys(state).find((key) => state[key]?.startsWith('Sent') || state[key] === 'sending');
      if (!destinationId || !state[destinationId]) return state;
      return { ...state, [destinationId]: `Replay finished: ${attempt.response_status ?? 'no answer'}${attempt.error ? ` (${attempt.error})` : ''} in ${attempt.duration_ms} ms; the event is ${message.event_status}.` };
    });
    details.delete(id);
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
  const curl = event && endpoint ? curlCommand(event, endpoint.url) : '';
  return (
    <article class="event-detail" aria-labelledby="detail-heading">
      <div class="detail-head">
        <a href={listHash} class="back-link">← Events</a>
        <h2 id="detail-heading" class="event-title" tabIndex={-1}>
          <span class="event-title-type">{event ? event.type ?? '(no type)' : 'Event'}</span> <span class="mono quiet event-title-id">{id}</span>
        </h2>
        <button type="button" class="close-detail small" onClick={onClose} aria-label="Close the event (Esc)" title="Close (Esc)">✕</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {!ready && !error && <p class="quiet">Loading…</p>}
      {ready && (
        <Inspector
          event={event}
          endpointName={endpoint?.name}
          onReplay={replay}
          replayState={replayState}
          actions={endpoint && (
            <div class="toolbar">
              <CopyButton id="copy-curl" text={curl} label="Copy as curl" />
              <details class="curl"><summary>Show the curl command</summary><pre id="curl-command" tabIndex={0}>{curl}</pre></details>
            </div>
          )}
        />
      )}
    </article>
  );
}
