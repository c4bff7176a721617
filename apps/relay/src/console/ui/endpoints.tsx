// The endpoints page (#/endpoints): ingest URLs, destinations with their health, signing secrets.
import { useEffect, useState } from 'preact/hooks';
import { call, type Endpoint, type Page } from './api.ts';
import { StatusBadge } from './inspector.tsx';
import { copyText } from './clipboard.ts';

export function useEndpoints(): Endpoint[] {
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

export function EndpointsPage() {
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

