// The console: a single-page app under /console with hash routes (#/events,
// #/events/<id>, #/endpoints, #/account). Signed in with an API key through
// POST /console/session (an HttpOnly cookie); every call sends that cookie.
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, problemText, type Endpoint, type HookEvent, type Page, type Session } from './api.ts';
import { Inspector, StatusBadge } from './inspector.tsx';
import { curlCommand } from './format.ts';
import { UsageChart, type UsageDay } from './chart.tsx';

/** Events kept in the live list; older ones are dropped from the page (still a click on "Older" away). */
const LIVE_LIST_MAX = 500;
const PAGE_SIZE = 50;

function useHashRoute(): string {
  const [hash, setHash] = useState(location.hash || '#/events');
  useEffect(() => {
    const onChange = () => setHash(location.hash || '#/events');
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

type StreamListener = (message: any) => void;
const streamListeners = new Set<StreamListener>();
let streamSocket: WebSocket | undefined;

/** One tail-mode WebSocket for the whole page; pages subscribe to its messages. */
function openStream(onState: (live: boolean) => void, delayMs = 500): void {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${location.host}/v1/stream?mode=tail`);
  streamSocket = socket;
  socket.addEventListener('open', () => { onState(true); delayMs = 500; });
  socket.addEventListener('message', (message) => {
    const data = JSON.parse(message.data as string);
    for (const listener of streamListeners) listener(data);
  });
  socket.addEventListener('close', (close) => {
    onState(false);
    if (streamSocket !== socket || close.code === 4001) return; // signed out or key revoked
    setTimeout(() => openStream(onState, Math.min(delayMs * 2, 10_000)), delayMs);
  });
}

function useStream(listener: StreamListener): void {
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(() => {
    const forward: StreamListener = (message) => ref.current(message);
    streamListeners.add(forward);
    return () => { streamListeners.delete(forward); };
  }, []);
}

async function copyText(text: string, setNote: (note: string) => void): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    setNote('Copied.');
  } catch {
    setNote('Select the text and copy it.');
  }
}

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const form = submitEvent.currentTarget as HTMLFormElement;
    const apiKey = (form.elements.namedItem('api_key') as HTMLInputElement).value.trim();
    if (!apiKey) return setError('Enter an API key (hk_…): the one signing up or claiming a playground gave you.');
    setBusy(true);
    try {
      await call('POST', '/console/session', { api_key: apiKey });
      form.reset();
      onSignedIn();
    } catch (failure) {
      // A refused key gets a fix in the console's words (the relay's names REST routes).
      setError(failure instanceof ApiError && failure.problem.code === 'invalid_api_key'
        ? 'That key is not one the relay knows: it may be mistyped or revoked. Paste the key (hk_…) that signing up, claiming a playground or `hook signup` printed, or start with the playground.'
        : failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>Sign in to the Hook console</h1>
      <p>Use an API key (<code>hk_…</code>). The key is sent once to make a session and is never put in a URL. No account yet? <code>curl -X POST {location.origin}/v1/accounts</code> makes one and prints its key, or start with the <a href="/playground">playground</a> and claim it.</p>
      <form id="signin-form" method="post" action="/console/session" onSubmit={submit} noValidate>
        <label for="api-key">API key</label>
        <input id="api-key" name="api_key" type="password" autocomplete="current-password" required aria-describedby="signin-error" aria-invalid={error ? 'true' : 'false'} />
        <p id="signin-error" class="error" role="alert">{error}</p>
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}

function useEndpoints(): Endpoint[] {
  const [endpoints, setEndpoints] = useState<Endpoint[]>([]);
  useEffect(() => { call<Page<Endpoint>>('GET', '/v1/endpoints?limit=100').then((page) => setEndpoints(page.data), () => {}); }, []);
  return endpoints;
}

function SecretBox({ endpoint }: { endpoint: Endpoint }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [note, setNote] = useState('');
  const reveal = async () => setSecret((await call('GET', `/v1/endpoints/${endpoint.id}/secret`)).secret);
  const rotate = async () => {
    setConfirming(false);
    const rotated = await call('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, {});
    setSecret(rotated.secret);
    setNote(`Rotated. The old secret keeps signing beside the new one until ${new Date(rotated.previous_secret_expires_at).toLocaleString()}.`);
  };
  return (
    <div class="secret">
      <span class="label">Signing secret</span>
      {secret ? <code class="secret-value">{secret}</code> : <button type="button" class="reveal-secret" onClick={reveal}>Reveal secret</button>}
      {confirming ? (
        <span class="confirm" role="group" aria-label="Confirm rotation">
          <span>Rotate? Receivers need the new secret within 24 hours.</span>
          <button type="button" class="confirm-rotate danger" onClick={rotate}>Yes, rotate</button>
          <button type="button" onClick={() => setConfirming(false)}>Cancel</button>
        </span>
      ) : <button type="button" class="rotate-secret" onClick={() => setConfirming(true)}>Rotate secret…</button>}
      <p class="quiet" role="status">{note}</p>
    </div>
  );
}

function EndpointsPage() {
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [note, setNote] = useState('');
  const [error, setError] = useState('');
  useEffect(() => {
    (async () => {
      const page = await call<Page<Endpoint>>('GET', '/v1/endpoints?limit=100');
      const withHealth = await Promise.all(page.data.map(async (endpoint) => ({ ...endpoint, destinations: (await call('GET', `/v1/endpoints/${endpoint.id}/destinations`)).data })));
      setEndpoints(withHealth);
    })().catch((failure) => setError(String(failure.message ?? failure)));
  }, []);
  return (
    <main id="main">
      <h1>Endpoints</h1>
      <p class="error" role="alert">{error}</p>
      <p class="quiet" role="status">{note}</p>
      {endpoints?.length === 0 && <p>No endpoints yet. Make one with <code>hook endpoints create &lt;name&gt;</code>.</p>}
      <ul class="cards">
        {endpoints?.map((endpoint) => (
          <li class="card endpoint" key={endpoint.id} data-endpoint-id={endpoint.id}>
            <h2>{endpoint.name} <StatusBadge status={endpoint.status} /></h2>
            <label for={`url-${endpoint.id}`}>Ingest URL</label>
            <div class="copy-row">
              <input id={`url-${endpoint.id}`} class="ingest-url" type="text" readOnly value={endpoint.url} />
              <button type="button" onClick={() => copyText(endpoint.url, setNote)}>Copy</button>
            </div>
            <h3>Destinations</h3>
            <ul class="destinations">
              {endpoint.destinations?.map((destination) => (
                <li key={destination.id} class="destination-row">
                  <StatusBadge status={destination.status} />{' '}
                  <span class="mono">{destination.destination.type === 'cli' ? 'hook listen' : destination.destination.type === 'url' ? destination.destination.url : `${destination.destination.type} ${destination.destination.url}`}</span>{' '}
                  <span class="quiet health">{destination.health && destination.health.consecutive_failures > 0
                    ? `${destination.health.consecutive_failures} failures in a row since ${new Date(destination.health.failing_since!).toLocaleString()}`
                    : 'healthy'}{destination.disabled_reason ? ` (disabled: ${destination.disabled_reason})` : ''}</span>
                </li>
              ))}
            </ul>
            <SecretBox endpoint={endpoint} />
            <p><a href={`#/events?endpoint_id=${endpoint.id}`}>Events of {endpoint.name}</a></p>
          </li>
        ))}
      </ul>
    </main>
  );
}

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

function EventsPage({ hash }: { hash: string }) {
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

function EventPage({ id }: { id: string }) {
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

function AccountPage() {
  const [account, setAccount] = useState<any>(null);
  const [days, setDays] = useState<UsageDay[] | null>(null);
  const [members, setMembers] = useState<any[]>([]);
  const [keys, setKeys] = useState<any[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    call('GET', '/v1/account').then(setAccount, (failure) => setError(failure.message));
    call('GET', '/v1/account/usage/daily?days=30').then((usage) => setDays(usage.days), (failure) => setError(failure.message));
    call('GET', '/v1/members?limit=100').then((page) => setMembers(page.data), () => {});
    call('GET', '/v1/api-keys?limit=100').then((page) => setKeys(page.data), () => {});
  }, []);
  const allowance = account?.limits?.events_per_month;
  const used = account?.usage?.events_accepted ?? 0;
  return (
    <main id="main">
      <h1>Account</h1>
      <p class="error" role="alert">{error}</p>
      {account && (
        <section aria-labelledby="plan-heading">
          <h2 id="plan-heading">Plan: <span id="plan">{account.account.plan}</span></h2>
          <p id="usage-line">{used.toLocaleString()} of {allowance === null ? 'unlimited' : allowance.toLocaleString()} events this month ({account.usage.month}){allowance ? `, ${Math.round((used / allowance) * 100)}% of the allowance` : ''}. The allowance resets {new Date(account.usage.resets_at).toLocaleDateString()}.</p>
          {allowance ? <progress id="usage-meter" max={allowance} value={used} aria-label="Events used this month">{used}</progress> : null}
        </section>
      )}
      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">Last 30 days</h2>
        {days ? <UsageChart days={days} /> : <p class="quiet">Loading usage…</p>}
      </section>
      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <div class="scroll"><table id="members"><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Since</th></tr></thead>
          <tbody>{members.map((member) => <tr key={member.id}><td>{member.email ?? '(no email)'}</td><td>{member.role}</td><td>{new Date(member.created_at).toLocaleDateString()}</td></tr>)}</tbody></table></div>
        <p class="quiet">Add one with <code>hook members add &lt;email&gt;</code>.</p>
      </section>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">API keys</h2>
        <div class="scroll"><table id="keys"><thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created</th></tr></thead>
          <tbody>{keys.map((key) => <tr key={key.id}><td>{key.name ?? '(no name)'}</td><td class="mono">{key.prefix}…</td><td>{new Date(key.created_at).toLocaleDateString()}</td></tr>)}</tbody></table></div>
        <p class="quiet">Revoking a key (<code>{'hook api-keys revoke <id>'}</code>) also ends the console sessions signed in with it.</p>
      </section>
    </main>
  );
}

function App() {
  const hash = useHashRoute();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [live, setLive] = useState(false);
  const check = useCallback(() => {
    call<Session>('GET', '/console/session').then(setSession, () => setSession(null));
  }, []);
  useEffect(() => {
    check();
    const signedOut = () => setSession(null);
    window.addEventListener('hook:signed-out', signedOut);
    return () => window.removeEventListener('hook:signed-out', signedOut);
  }, [check]);
  useEffect(() => {
    if (!session) return;
    openStream(setLive);
    return () => { const socket = streamSocket; streamSocket = undefined; socket?.close(); };
  }, [session]);
  useEffect(() => { document.title = `${hash.split(/[/?]/)[1] ?? 'events'} · Hook console`; }, [hash]);

  if (session === undefined) return <main id="main"><p class="quiet">Loading…</p></main>;
  if (session === null) return <SignIn onSignedIn={check} />;
  const signOut = async () => {
    await call('DELETE', '/console/session').catch(() => {});
    setSession(null);
  };
  const route = hash.split('?')[0]!;
  const eventId = /^#\/events\/(evt_[\w-]+)$/.exec(route)?.[1];
  const current = (path: string) => (route === path || (path === '#/events' && eventId) ? 'page' : undefined);
  return (
    <>
      <header class="top">
        <a href="#/events" class="brand">Hook console</a>
        <nav aria-label="Console">
          <a href="#/events" aria-current={current('#/events')}>Events</a>
          <a href="#/endpoints" aria-current={current('#/endpoints')}>Endpoints</a>
          <a href="#/account" aria-current={current('#/account')}>Account</a>
        </nav>
        <span class="quiet session-info"><span class={live ? 'live on' : 'live'} role="status">{live ? 'Live' : 'Connecting…'}</span> {session.key_prefix}… ({session.role})</span>
        <button type="button" id="sign-out" onClick={signOut}>Sign out</button>
      </header>
      {eventId ? <EventPage id={eventId} key={eventId} />
        : route === '#/endpoints' ? <EndpointsPage />
        : route === '#/account' ? <AccountPage />
        : <EventsPage hash={hash} />}
    </>
  );
}

render(<App />, document.getElementById('app')!);
export { problemText };
