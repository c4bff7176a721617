// The event inspector: one event's request (body by content type, headers, query,
// size), its deliveries and attempts on a timeline, and what to do about a pending one.
// The console's event page and the playground both render it. Everything from the
// event is rendered as text (Preact escapes it); nothing is ever set as HTML.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Attempt, Delivery, HookEvent } from './api.ts';
import { BODY_PREVIEW_CHARS, HEX_PREVIEW_BYTES, formatSize, hexDump, viewOfBody } from './format.ts';

export function StatusBadge({ status }: { status: string }) {
  return <span class="status" data-status={status}>{status}</span>;
}

/** Long text shown up to a cap, with a button for the rest (a megabyte on one line would freeze layout). */
export function CappedText({ text, className, limit = BODY_PREVIEW_CHARS }: { text: string; className?: string; limit?: number }) {
  const [all, setAll] = useState(false);
  const capped = !all && text.length > limit;
  return (
    <>
      <pre class={className} tabIndex={0}>{capped ? text.slice(0, limit) : text}</pre>
      {capped && (
        <p class="quiet">
          Showing the first {limit.toLocaleString()} of {text.length.toLocaleString()} characters.{' '}
          <button type="button" class="link" onClick={() => setAll(true)}>Show all</button>
        </p>
      )}
    </>
  );
}

function HexBody({ bytes }: { bytes: Uint8Array }) {
  const [all, setAll] = useState(false);
  const capped = !all && bytes.length > HEX_PREVIEW_BYTES;
  return (
    <>
      <p class="quiet">Not valid UTF-8: shown as a hex dump of the exact bytes.</p>
      <pre class="event-body hex" tabIndex={0}>{hexDump(bytes, capped ? HEX_PREVIEW_BYTES : bytes.length)}</pre>
      {capped && <p class="quiet">Showing the first {HEX_PREVIEW_BYTES.toLocaleString()} of {bytes.length.toLocaleString()} bytes. <button type="button" class="link" onClick={() => setAll(true)}>Show all</button></p>}
    </>
  );
}

export function EventBody({ event }: { event: HookEvent }) {
  const view = viewOfBody(event.body, event.body_encoding, event.content_type);
  switch (view.kind) {
    case 'empty': return <p class="quiet event-body">No body.</p>;
    case 'binary': return <HexBody bytes={view.bytes} />;
    case 'form': return (
      <div class="scroll">
        <table class="event-body form-fields">
          <caption class="quiet">Form fields</caption>
          <thead><tr><th scope="col">Field</th><th scope="col">Value</th></tr></thead>
          <tbody>{view.fields.map(([name, value], index) => <tr key={index}><td>{name}</td><td>{value}</td></tr>)}</tbody>
        </table>
      </div>
    );
    default: return <CappedText text={view.text} className={`event-body body-${view.kind}`} />;
  }
}

function HeaderTable({ headers }: { headers: Record<string, string> }) {
  return (
    <div class="scroll">
      <table class="headers">
        <thead><tr><th scope="col">Header</th><th scope="col">Value</th></tr></thead>
        <tbody>{Object.entries(headers).map(([name, value]) => <tr key={name}><td>{name}</td><td><CappedValue text={value} /></td></tr>)}</tbody>
      </table>
      {/* The same headers as lines, for copying and for tests that read them as text. */}
      <pre class="event-headers visually-hidden">{Object.entries(headers).map(([name, value]) => `${name}: ${value.slice(0, BODY_PREVIEW_CHARS)}`).join('\n')}</pre>
    </div>
  );
}

function CappedValue({ text }: { text: string }) {
  const [all, setAll] = useState(false);
  if (all || text.length <= 2048) return <>{text}</>;
  return <>{text.slice(0, 2048)}… <button type="button" class="link" onClick={() => setAll(true)}>Show all {text.length.toLocaleString()} characters</button></>;
}

function AttemptRow({ attempt }: { attempt: Attempt }) {
  const ok = attempt.response_status !== null && attempt.response_status >= 200 && attempt.response_status < 300;
  return (
    <li class="attempt" data-ok={String(ok)} data-attempt-id={attempt.id}>
      <div class="attempt-line">
        <span class="attempt-n">#{attempt.n}</span>
        <span class="quiet">{attempt.trigger}</span>
        <span class="attempt-status">{attempt.response_status ?? 'no answer'}</span>
        <span>{attempt.duration_ms} ms</span>
        <time dateTime={attempt.started_at}>{new Date(attempt.started_at).toLocaleString()}</time>
      </div>
      {attempt.error && <p class="error attempt-error">{attempt.error}</p>}
      {attempt.response_body ? (
        <details>
          <summary>Response body</summary>
          <CappedText text={attempt.response_body} className="response-body" limit={4096} />
        </details>
      ) : null}
    </li>
  );
}

function destinationLabel(delivery: Delivery): string {
  const destination = delivery.destination;
  if (!destination) return 'a deleted destination';
  const target = destination.type === 'cli' ? 'hook listen' : destination.type === 'url' ? destination.url : `${destination.type} ${destination.url}`;
  return delivery.destination_deleted_at ? `${target} (deleted)` : target;
}

/** A sentence whose `quoted` parts are commands: shown as code. */
function WithCommands({ text }: { text: string }) {
  return <>{text.split('`').map((part, index) => (index % 2 ? <code key={index}>{part}</code> : part))}</>;
}

/** Why an event (or one of its deliveries) is pending, and what to do: in CLI words. */
export function pendingReason(event: HookEvent, delivery: Delivery | undefined, endpointName: string | undefined): string | undefined {
  if ((delivery?.status ?? event.status) !== 'pending') return undefined;
  const endpoint = endpointName ?? event.endpoint_id ?? '<endpoint>';
  if (!delivery) return `Pending: this endpoint has no destination yet. Run \`hook listen 3000 --endpoint ${endpoint}\` to receive it on your machine, or \`hook endpoints update ${endpoint} --destination https://…\` to send it to a URL.`;
  if (!delivery.destination) return 'Pending: its destination was deleted, so nothing will deliver it.';
  if (delivery.destination.type === 'cli') return `Pending: it goes to \`hook listen\` and no listener has taken it. Run \`hook listen 3000 --endpoint ${endpoint}\` (your local port) and it is delivered at once; or \`hook endpoints update ${endpoint} --destination https://…\` to send it to a URL.`;
  if (delivery.next_attempt_at) return `Pending: due ${new Date(delivery.next_attempt_at).toLocaleString()}; if that has passed, the endpoint or destination may be paused (\`hook endpoints update ${endpoint} --resume\`).`;
  return 'Pending: the relay is sending it.';
}

export interface InspectorProps {
  event: HookEvent;
  endpointName?: string;
  /** Replays one delivery; absent where replay is not possible (the playground). */
  onReplay?: (destinationId: string) => void;
  replayState?: Record<string, string>;
  /** Shown instead of the usual pending explanation (the playground has its own). */
  pendingHelp?: ComponentChildren;
  actions?: ComponentChildren;
}

export function Inspector({ event, endpointName, onReplay, replayState = {}, pendingHelp, actions }: InspectorProps) {
  const attempts = event.attempts ?? [];
  const deliveries = event.deliveries ?? [];
  const looseAttempts = attempts.filter((attempt) => !deliveries.some((delivery) => delivery.destination_id === attempt.destination_id));
  return (
    <div class="inspector" data-event-id={event.id}>
      <dl class="facts">
        <dt>Status</dt><dd><StatusBadge status={event.status} /></dd>
        <dt>Type</dt><dd>{event.type ?? '(no type)'}</dd>
        <dt>Request</dt><dd class="mono">{event.method} {event.path || '/'}</dd>
        <dt>Received</dt><dd><time dateTime={event.received_at}>{new Date(event.received_at).toLocaleString()}</time></dd>
        <dt>Size</dt><dd class="event-size">{formatSize(event.size)}</dd>
        <dt>Content type</dt><dd class="mono">{event.content_type ?? '(none)'}</dd>
      </dl>
      {event.status === 'pending' && (pendingHelp ?? (deliveries.length === 0 ? <p class="pending-reason"><WithCommands text={pendingReason(event, undefined, endpointName)!} /></p> : null))}
      {actions}
      <h3>Body</h3>
      <EventBody event={event} />
      <h3>Query</h3>
      {event.query ? (
        <div class="scroll"><table class="query"><thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
          <tbody>{[...new URLSearchParams(event.query)].map(([name, value], index) => <tr key={index}><td>{name}</td><td>{value}</td></tr>)}</tbody></table></div>
      ) : <p class="quiet">No query string.</p>}
      <h3>Headers</h3>
      {event.headers ? <HeaderTable headers={event.headers} /> : <p class="quiet">No headers.</p>}
      {(deliveries.length > 0 || attempts.length > 0) && <h3>Deliveries</h3>}
      {deliveries.map((delivery) => {
        const reason = pendingReason(event, delivery, endpointName);
        return (
          <section class="delivery" key={delivery.destination_id} data-destination-id={delivery.destination_id} aria-label={`Delivery to ${destinationLabel(delivery)}`}>
            <div class="delivery-head">
              <StatusBadge status={delivery.status} />
              <span class="mono destination">{destinationLabel(delivery)}</span>
              {onReplay && !delivery.destination_deleted_at && (
                <button type="button" class="replay" onClick={() => onReplay(delivery.destination_id)} disabled={replayState[delivery.destination_id] === 'sending'}>
                  Replay to this destination
                </button>
              )}
            </div>
            {replayState[delivery.destination_id] && replayState[delivery.destination_id] !== 'sending' && <p class="replay-result" role="status">{replayState[delivery.destination_id]}</p>}
            {reason && <p class="pending-reason"><WithCommands text={reason} /></p>}
            <ol class="timeline">{attempts.filter((attempt) => attempt.destination_id === delivery.destination_id).map((attempt) => <AttemptRow key={attempt.id} attempt={attempt} />)}</ol>
          </section>
        );
      })}
      {looseAttempts.length > 0 && <ol class="timeline">{looseAttempts.map((attempt) => <AttemptRow key={attempt.id} attempt={attempt} />)}</ol>}
    </div>
  );
}
