// The inspector for pages outside the console (the playground): plain DOM in, Preact inside.
import { render } from 'preact';
import type { HookEvent } from './api.ts';
import { Inspector } from './inspector.tsx';

export interface PlaygroundInspectorOptions {
  /** Whether the playground was claimed: the pending help then names the account's commands. */
  claimed: boolean;
}

function PlaygroundPendingHelp({ claimed }: PlaygroundInspectorOptions) {
  return (
    <div class="pending-reason" role="note">
      <p><strong>Why pending:</strong> this endpoint has no destination yet. Its events wait for a <code>hook listen</code> session, and no listener is connected, so nothing has delivered it.</p>
      <p><strong>What to do:</strong> {claimed ? 'with the API key you got when claiming,' : 'claim this playground (below) for an API key, then'} run <code>hook login --api-key hk_… --api-url {location.origin}</code> and <code>hook listen 3000</code> to forward it to port 3000 on your machine, or <code>hook endpoints update playground --destination https://…</code> to send it to a URL. Waiting events are delivered at once.</p>
    </div>
  );
}

/** Renders the inspector for one playground event into `container` (again on each call). */
export function renderInspector(container: Element, event: HookEvent, options: PlaygroundInspectorOptions): void {
  render(<Inspector event={event} pendingHelp={<PlaygroundPendingHelp {...options} />} />, container);
}
