// The console: a single-page app under /console with hash routes (the table in routes.tsx).
// Signed in with an API key through POST /console/session (an HttpOnly cookie); every
// call sends that cookie.
import { render } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, call, problemText, type Session } from './api.ts';
import { closeStream, openStream } from './stream.ts';
import { routeFor } from './routes.tsx';
import { Shell, themeLabel } from './shell.tsx';

function useHashRoute(): string {
  const [hash, setHash] = useState(location.hash || '#/events');
  useEffect(() => {
    const onChange = () => setHash(location.hash || '#/events');
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return hash;
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
      <div class="signin-card">
        <p class="brand"><span class="brand-mark" aria-hidden="true">◆</span> Hook <span class="brand-sub">console</span></p>
        <h1>Sign in</h1>
        <p class="quiet">Use an API key (<code>hk_…</code>). The key is sent once to make a session and is never put in a URL.</p>
        <form id="signin-form" method="post" action="/console/session" onSubmit={submit} noValidate>
          <label for="api-key">API key</label>
          <input id="api-key" name="api_key" type="password" autocomplete="current-password" required aria-describedby="signin-error" aria-invalid={error ? 'true' : 'false'} placeholder="hk_…" />
          <p id="signin-error" class="error" role="alert">{error}</p>
          <button type="submit" class="primary" disabled={busy}>Sign in</button>
        </form>
        <p class="quiet signin-help">No account yet? <code>curl -X POST {location.origin}/v1/accounts</code> makes one and prints its key, or start with the <a href="/playground">playground</a> and claim it.</p>
        <button type="button" class="theme-toggle small" data-theme-toggle>{themeLabel()}</button>
      </div>
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
    return closeStream;
  }, [session]);
  const { route, match } = routeFor(hash);
  // A layout effect: it runs before the pages' own effects, which may name the page more precisely.
  useLayoutEffect(() => { document.title = `${route.title} · Hook console`; }, [route]);

  if (session === undefined) return <main id="main" class="loading"><p class="quiet">Loading…</p></main>;
  if (session === null) return <SignIn onSignedIn={check} />;
  const signOut = async () => {
    await call('DELETE', '/console/session').catch(() => {});
    setSession(null);
  };
  const Page = route.page;
  return (
    <Shell session={session} live={live} path={hash.split('?')[0]!} onSignOut={signOut}>
      <Page hash={hash} match={match} />
    </Shell>
  );
}

render(<App />, document.getElementById('app')!);
export { problemText };
