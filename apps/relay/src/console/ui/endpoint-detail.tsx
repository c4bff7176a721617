// One endpoint's page (#/endpoints/<id>): its ingest URL and actions, its destinations
// (add, pause, resume, delete, their signing secrets, rules and options) and its ingest
// settings. Every change is a REST call the CLI also makes (docs/api.md#destinations).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { call, type Destination, type Endpoint, type HookEvent, type Page } from './api.ts';
import { StatusBadge } from './inspector.tsx';
import { copyText } from './clipboard.ts';
import { useStream } from './stream.ts';
import { ConfirmButton } from './dialog.tsx';
import { useSubmit } from './forms.ts';
import { destinationLabel, EndpointActions, healthText, SecretBox } from './endpoints.tsx';
import { DestinationForm } from './destination-form.tsx';
import { RulesEditor } from './rules.tsx';
import { IngestSettings } from './settings-forms.tsx';

/** Recent events offered as test input for rules. */
const RECENT_EVENTS = 20;

/** A destination's delivery options in a few words each (nothing secret: the API shows none). */
function optionWords(destination: Destination): string[] {
  const words: string[] = [];
  if (destination.auth) words.push(`auth ${destination.auth.type}${destination.auth.type === 'basic' ? ` (${String(destination.auth.username)})` : ''}`);
  if (destination.tls) words.push(destination.tls.client_certificate ? 'client certificate' : 'private CA');
  if (destination.signature_scheme === 'v1a') words.push('signed v1a (ed25519)');
  if (destination.ordering) {
    const key = destination.ordering.key;
    words.push(`ordered by ${key === null ? 'arrival' : 'header' in key ? `header ${key.header}` : `field ${key.json_field}`}, ${destination.ordering.on_give_up} on give-up`);
  }
  if (destination.delay_seconds) words.push(`delayed ${destination.delay_seconds} s`);
  if (destination.rate_per_second) words.push(`at most ${destination.rate_per_second}/s`);
  if (destination.max_in_flight) words.push(`at most ${destination.max_in_flight} in flight`);
  return words;
}

function DestinationCard({ destination, count, events, onChanged, onDeleted }: {
  destination: Destination; count: number; events: HookEvent[];
  onChanged: (destination: Destination) => void; onDeleted: () => void;
}) {
  const status = useSubmit();
  const setStatus = (next: 'active' | 'paused') => status.run(async () => {
    onChanged(await call<Destination>('PATCH', `/v1/destinations/${destination.id}`, { status: next }));
    return next === 'paused' ? 'Paused: its deliveries wait, pending, until you resume.' : 'Resumed: its waiting deliveries go now, oldest first.';
  });
  const options = optionWords(destination);
  const rules = [destination.transformation ? 'transformation' : '', destination.filter ? 'filter' : ''].filter(Boolean);
  return (
    <li class="card destination-card" data-destination-id={destination.id}>
      <h3 class="destination-row">
        <StatusBadge status={destination.status} /> <span class="mono">{destinationLabel(destination)}</span>
      </h3>
      <p class="quiet health">{healthText(destination)}{options.length ? ` · ${options.join(' · ')}` : ''}</p>
      <div class="toolbar">
        {destination.status === 'active'
          ? <button type="button" class="pause-destination" disabled={status.busy} onClick={() => setStatus('paused')}>Pause</button>
          : <button type="button" class="resume-destination" disabled={status.busy} onClick={() => setStatus('active')}>Resume</button>}
        {count > 1 ? (
          <ConfirmButton label="Delete…" class="delete-destination" title={`Delete the destination ${destinationLabel(destination)}?`} confirmLabel="Delete destination"
            onConfirm={async () => { await call('DELETE', `/v1/destinations/${destination.id}`); onDeleted(); }}>
            <p>It gets no more deliveries. Deliveries to it not yet made become failed; its past deliveries and attempts stay in the history.</p>
            <p>Its signing secret, rules and options are deleted with it.</p>
          </ConfirmButton>
        ) : <span class="quiet">The endpoint's only destination: add another before deleting this one.</span>}
        <span class="quiet" role="status">{status.note}</span>
      </div>
      <p class="error" role="alert">{status.messages['']}</p>
      <SecretBox base={`/v1/destinations/${destination.id}`} />
      <details class="rules-details">
        <summary>Rules: {rules.length ? rules.join(' and ') : 'none'} (transformation and filter)</summary>
        <RulesEditor destination={destination} events={events} onSaved={onChanged} />
      </details>
    </li>
  );
}

export function EndpointDetailPage({ id }: { id: string }) {
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [events, setEvents] = useState<HookEvent[] | null>(null);
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const [adding, setAdding] = useState(false);
  const load = useCallback(async () => {
    try {
      const [loaded, recent] = await Promise.all([
        call<Endpoint>('GET', `/v1/endpoints/${id}`),
        call<Page<HookEvent>>('GET', `/v1/events?endpoint_id=${encodeURIComponent(id)}&limit=${RECENT_EVENTS}`),
      ]);
      setEndpoint(loaded);
      setEvents(recent.data);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }, [id]);
  useEffect(() => { load(); }, [load]);
  useEffect(() => { if (endpoint) document.title = `${endpoint.name} · Endpoints · Hook console`; }, [endpoint?.name]);
  // New events of this endpoint become test input at once.
  useStream((message) => {
    if (message.type === 'event.received' && message.event.endpoint_id === id) setEvents((list) => [message.event, ...(list ?? [])].slice(0, RECENT_EVENTS));
  });

  if (error) return <main id="main"><h1>Endpoint</h1><p class="error" role="alert">{error}</p><p><a href="#/endpoints">All endpoints</a></p></main>;
  if (!endpoint || !events) return <main id="main"><h1>Endpoint</h1><p class="quiet">Loading…</p></main>;
  const destinations = endpoint.destinations ?? [];
  const changeDestination = (changed: Destination) => setEndpoint((current) => current && { ...current, destinations: current.destinations?.map((row) => row.id === changed.id ? changed : row) });
  return (
    <main id="main" class="endpoint-detail" data-endpoint-id={endpoint.id}>
      <p><a href="#/endpoints">← All endpoints</a></p>
      <h1>{endpoint.name} <StatusBadge status={endpoint.status} /></h1>
      <EndpointActions endpoint={endpoint} onChanged={(changed) => setEndpoint((current) => ({ ...current, ...changed }))} onDeleted={() => { location.hash = '#/endpoints'; }} />
      <label for="detail-url">Ingest URL</label>
      <div class="copy-row">
        <input id="detail-url" class="ingest-url" type="text" readOnly value={endpoint.url} />
        <button type="button" onClick={() => copyText(endpoint.url, setNote)}>Copy</button>
      </div>
      <p class="quiet" role="status">{note} <a href={`#/events?endpoint_id=${endpoint.id}`}>Events of {endpoint.name}</a></p>

      <section aria-labelledby="destinations-heading">
        <h2 id="destinations-heading">Destinations</h2>
        <p class="quiet">Each gets its own delivery of every event received after it was added, signed with its own secret.</p>
        <ul class="cards destinations-list">
          {destinations.map((destination) => (
            <DestinationCard key={destination.id} destination={destination} count={destinations.length} events={events}
              onChanged={changeDestination}
              onDeleted={() => setEndpoint((current) => current && { ...current, destinations: current.destinations?.filter((row) => row.id !== destination.id) })} />
          ))}
        </ul>
        {adding
          ? <DestinationForm endpointId={endpoint.id} onCancel={() => setAdding(false)} onAdded={(added) => { setAdding(false); setEndpoint((current) => current && { ...current, destinations: [...(current.destinations ?? []), added] }); }} />
          : <button type="button" class="primary add-destination" onClick={() => setAdding(true)}>Add a destination</button>}
      </section>

      <section aria-labelledby="ingest-heading">
        <h2 id="ingest-heading">Ingest settings</h2>
        <IngestSettings endpoint={endpoint} onSaved={(changed) => setEndpoint((current) => ({ ...current, ...changed }))} />
      </section>
    </main>
  );
}
