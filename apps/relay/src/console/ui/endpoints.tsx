// The endpoints page (#/endpoints): each endpoint's ingest URL, destinations with their
// health and signing secret; making, renaming, pausing, resuming and deleting endpoints
// through the REST routes the CLI uses (docs/api.md#endpoints). An endpoint's own page
// (endpoint-detail.tsx) edits its destinations, rules and ingest settings.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { call, type Destination, type Endpoint, type Page } from './api.ts';
import { StatusBadge } from './inspector.tsx';
import { copyText } from './clipboard.ts';
import { ConfirmButton } from './dialog.tsx';
import { describedBy, textOf, useSubmit } from './forms.ts';

export function useEndpoints(): Endpoint[] {
  const [endpoints, setEndpoints] = useState<Endpoint[]>([]);
  useEffect(() => { call<Page<Endpoint>>('GET', '/v1/endpoints?limit=100').then((page) => setEndpoints(page.data), () => {}); }, []);
  return endpoints;
}

/** Where a destination sends, in a few words: `hook listen`, its URL, or its broker and target. */
export function destinationLabel(destination: Destination): string {
  const target = destination.destination as Record<string, unknown> & { type: string; url?: string };
  if (target.type === 'cli') return 'hook listen';
  if (target.type === 'url') return target.url!;
  const on = target.exchange !== undefined ? `exchange ${target.exchange || '(default)'}, routing key ${target.routing_key}`
    : target.subject ? `subject ${target.subject}` : target.stream ? `stream ${target.stream}` : target.topic ? `topic ${target.topic}` : '';
  return `${target.type} ${target.url}${on ? ` (${on})` : ''}`;
}

export function healthText(destination: Destination): string {
  const failing = destination.health && destination.health.consecutive_failures > 0
    ? `${destination.health.consecutive_failures} failures in a row since ${new Date(destination.health.failing_since!).toLocaleString()}`
    : 'healthy';
  return `${failing}${destination.disabled_reason ? ` (disabled: ${destination.disabled_reason})` : ''}`;
}

/** A signing secret shown on request, and rotated after an inline confirm. `base` is the endpoint's or destination's route. */
export function SecretBox({ base, label = 'Signing secret' }: { base: string; label?: string }) {
  const [secret, setSecret] = useState<{ secret: string; public_key: string | null } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [note, setNote] = useState('');
  const reveal = async () => {
    try { setSecret(await call('GET', `${base}/secret`)); } catch (failure) { setNote((failure as Error).message); }
  };
  const rotate = async () => {
    setConfirming(false);
    try {
      const rotated = await call('POST', `${base}/rotate-secret`, {});
      setSecret(rotated);
      setNote(`Rotated. The old secret keeps signing beside the new one until ${new Date(rotated.previous_secret_expires_at).toLocaleString()}.`);
    } catch (failure) {
      setNote((failure as Error).message);
    }
  };
  return (
    <div class="secret">
      <span class="label">{label}</span>
      {secret ? <code class="secret-value">{secret.secret}</code> : <button type="button" class="reveal-secret" onClick={reveal}>Reveal secret</button>}
      {secret?.public_key && <span class="quiet">Public key (receivers verify with it): <code class="public-key">{secret.public_key}</code></span>}
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

/** Rename, pause or resume, delete: the endpoint's own actions, on its card and its page. */
export function EndpointActions({ endpoint, onChanged, onDeleted }: { endpoint: Endpoint; onChanged: (endpoint: Endpoint) => void; onDeleted: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const rename = useSubmit({ known: ['name'] });
  const status = useSubmit();
  const submitName = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const name = textOf(submitEvent.currentTarget as HTMLFormElement, 'name');
    const done = await rename.run(async () => { onChanged(await call<Endpoint>('PATCH', `/v1/endpoints/${endpoint.id}`, { name })); });
    if (done) setRenaming(false);
  };
  const setStatus = (next: 'active' | 'paused') => status.run(async () => {
    onChanged(await call<Endpoint>('PATCH', `/v1/endpoints/${endpoint.id}`, { status: next }));
    return next === 'paused' ? 'Paused: events are still received and stored; nothing is delivered until you resume.' : 'Resumed: waiting events are delivered, oldest first.';
  });
  const destinations = endpoint.destinations?.length ?? 0;
  const nameId = `rename-${endpoint.id}`;
  return (
    <div class="endpoint-actions">
      {renaming ? (
        <form class="rename-form inline-form" onSubmit={submitName}>
          <label for={nameId}>New name</label>
          <input id={nameId} name="name" type="text" required maxLength={200} defaultValue={endpoint.name} {...describedBy(rename.messages, 'name', nameId)} />
          <button type="submit" class="primary" disabled={rename.busy}>Save name</button>
          <button type="button" onClick={() => setRenaming(false)}>Cancel</button>
          <p id={`${nameId}-message`} class="error field-message" role="alert">{rename.messages.name ?? rename.messages['']}</p>
        </form>
      ) : (
        <div class="toolbar">
          <button type="button" class="rename-endpoint" onClick={() => setRenaming(true)}>Rename</button>
          {endpoint.status === 'active'
            ? <button type="button" class="pause-endpoint" disabled={status.busy} onClick={() => setStatus('paused')}>Pause</button>
            : <button type="button" class="resume-endpoint" disabled={status.busy} onClick={() => setStatus('active')}>Resume</button>}
          <ConfirmButton
            label="Delete…"
            class="delete-endpoint"
            title={`Delete the endpoint ${endpoint.name}?`}
            confirmLabel="Delete endpoint"
            onConfirm={async () => { await call('DELETE', `/v1/endpoints/${endpoint.id}`); onDeleted(); }}
          >
            <p>Its ingest URL stops receiving at once: senders get <code>404</code> and nothing they send is stored.</p>
            <p>{destinations === 1 ? 'Its destination stops' : `Its ${destinations} destinations stop`} delivering; deliveries not yet made become failed. Its signing secret, rules and ingest settings are deleted with it.</p>
            <p>Its events stay in the history. This cannot be undone: a new endpoint gets a new URL.</p>
          </ConfirmButton>
        </div>
      )}
      <p class="error" role="alert">{status.messages['']}</p>
      <p class="quiet" role="status">{status.note}</p>
    </div>
  );
}

/** A name, then the new endpoint's URL and signing secret, each with a copy button. */
function NewEndpoint({ onCreated }: { onCreated: (endpoint: Endpoint) => void }) {
  const submit = useSubmit({ known: ['name'] });
  const [created, setCreated] = useState<{ endpoint: Endpoint; secret: string } | null>(null);
  const [note, setNote] = useState('');
  const create = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const form = submitEvent.currentTarget as HTMLFormElement;
    const name = textOf(form, 'name');
    await submit.run(async () => {
      const endpoint = await call<Endpoint>('POST', '/v1/endpoints', { name });
      const { secret } = await call<{ secret: string }>('GET', `/v1/endpoints/${endpoint.id}/secret`);
      form.reset();
      setCreated({ endpoint, secret });
      onCreated(endpoint);
    });
  };
  return (
    <section class="card new-endpoint" aria-labelledby="new-endpoint-heading">
      <h2 id="new-endpoint-heading">New endpoint</h2>
      <form id="new-endpoint-form" class="inline-form" onSubmit={create} noValidate>
        <label for="new-endpoint-name">Name</label>
        <input id="new-endpoint-name" name="name" type="text" required maxLength={200} placeholder="stripe-dev" {...describedBy(submit.messages, 'name', 'new-endpoint-name')} />
        <button type="submit" class="primary" disabled={submit.busy}>Create endpoint</button>
        <p id="new-endpoint-name-message" class="error field-message" role="alert">{submit.messages.name ?? submit.messages['']}</p>
      </form>
      {created && (
        <div class="created" id="created-endpoint" role="status">
          <p><strong>{created.endpoint.name}</strong> receives events now. Send them to its ingest URL; until you add a destination they wait for <code>hook listen</code>.</p>
          <label for="created-url">Ingest URL (treat it like a password)</label>
          <div class="copy-row">
            <input id="created-url" class="created-url" type="text" readOnly value={created.endpoint.url} />
            <button type="button" onClick={() => copyText(created.endpoint.url, setNote)}>Copy URL</button>
          </div>
          <label for="created-secret">Signing secret (receivers verify deliveries with it)</label>
          <div class="copy-row">
            <input id="created-secret" class="created-secret mono" type="text" readOnly value={created.secret} />
            <button type="button" onClick={() => copyText(created.secret, setNote)}>Copy secret</button>
          </div>
          <p class="quiet">{note} <a href={`#/endpoints/${created.endpoint.id}`}>Add a destination, rules and ingest settings</a></p>
        </div>
      )}
    </section>
  );
}

export function EndpointsPage() {
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [note, setNote] = useState('');
  const [error, setError] = useState('');
  const load = useCallback(() => {
    (async () => {
      const page = await call<Page<Endpoint>>('GET', '/v1/endpoints?limit=100');
      const withHealth = await Promise.all(page.data.map(async (endpoint) => ({ ...endpoint, destinations: (await call('GET', `/v1/endpoints/${endpoint.id}/destinations`)).data })));
      setEndpoints(withHealth);
    })().catch((failure) => setError(String(failure.message ?? failure)));
  }, []);
  useEffect(load, [load]);
  const replace = (changed: Endpoint) => setEndpoints((list) => list?.map((endpoint) => endpoint.id === changed.id ? { ...endpoint, ...changed } : endpoint) ?? null);
  const remove = (id: string, name: string) => {
    setEndpoints((list) => list?.filter((endpoint) => endpoint.id !== id) ?? null);
    setNote(`Deleted ${name}. Its events stay in the history.`);
  };
  return (
    <main id="main">
      <h1>Endpoints</h1>
      <p class="error" role="alert">{error}</p>
      <p class="quiet" role="status" id="endpoints-note">{note}</p>
      <NewEndpoint onCreated={load} />
      {endpoints?.length === 0 && <p>No endpoints yet. Make one above, or with <code>hook endpoints create &lt;name&gt;</code>.</p>}
      <ul class="cards">
        {endpoints?.map((endpoint) => (
          <li class="card endpoint" key={endpoint.id} data-endpoint-id={endpoint.id}>
            <h2><a href={`#/endpoints/${endpoint.id}`} class="endpoint-name">{endpoint.name}</a> <StatusBadge status={endpoint.status} /></h2>
            <label for={`url-${endpoint.id}`}>Ingest URL</label>
            <div class="copy-row">
              <input id={`url-${endpoint.id}`} class="ingest-url" type="text" readOnly value={endpoint.url} />
              <button type="button" onClick={() => copyText(endpoint.url, setNote)}>Copy</button>
            </div>
            <h3>{endpoint.destinations?.length === 1 ? '1 destination' : `${endpoint.destinations?.length ?? 0} destinations`}</h3>
            <ul class="destinations">
              {endpoint.destinations?.map((destination) => (
                <li key={destination.id} class="destination-row">
                  <StatusBadge status={destination.status} />{' '}
                  <span class="mono">{destinationLabel(destination)}</span>{' '}
                  <span class="quiet health">{healthText(destination)}</span>
                </li>
              ))}
            </ul>
            <SecretBox base={`/v1/endpoints/${endpoint.id}`} />
            <EndpointActions endpoint={endpoint} onChanged={replace} onDeleted={() => remove(endpoint.id, endpoint.name)} />
            <p class="card-links"><a href={`#/endpoints/${endpoint.id}`}>Destinations, rules and settings</a> · <a href={`#/events?endpoint_id=${endpoint.id}`}>Events of {endpoint.name}</a></p>
          </li>
        ))}
      </ul>
    </main>
  );
}
