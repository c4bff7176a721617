// The event inspector: one event's facts, body (pretty or raw), query and headers, its
// deliveries per destination, and each attempt with the request Hook sent and the
// response it got. The console's events page and the playground both render it.
// Everything from the event is rendered as text or text inside spans that Preact builds
// (it escapes): nothing from a tenant is ever set as HTML.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Attempt, Delivery, HookEvent } from './api.ts';
import { BODY_PREVIEW_CHARS, HEX_PREVIEW_BYTES, formatSize, hexDump, viewOfBody } from './format.ts';
import { highlightedJson } from './json.tsx';
import { CopyButton } from './copy.tsx';
import { isSuccessStatus } from '../../../../../packages/core/src/http-rules.ts';
import { RelativeTime, clockText, relativeText, useNow } from './time.tsx';

/** The tone tokens.css gives a status: colour, and a shape beside the word. */
export function statusTone(status: string): 'ok' | 'warn' | 'error' | 'info' | 'neutral' {
  switch (status) {
    case 'delivered': case 'active': case 'healthy': case 'resolved': return 'ok';
    case 'retrying': case 'paused': case 'acknowledged': return 'warn';
    case 'failed': case 'disabled': case 'open': return 'error';
    case 'pending': return 'info';
    default: return 'neutral';
  }
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`status badge ${statusTone(status)}`} data-status={status}>{status}</span>;
}

/** Long text shown up to a cap, with a button for the rest (a megabyte on one line would freeze layout). */
export function CappedText({ text, className, limit = BODY_PREVIEW_CHARS, json = false }: { text: string; className?: string; limit?: number; json?: boolean }) {
  const [all, setAll] = useState(false);
  const capped = !all && text.length > limit;
  const shown = capped ? text.slice(0, limit) : text;
  return (
    <>
      <pre class={className} tabIndex={0}>{json ? highlightedJson(shown) : shown}</pre>
      {capped && (
        <p class="quiet cap-note">
          Showing the first {limit.toLocaleString()} of {text.length.toLocaleString()} characters.{' '}
          <button type="button" class="link" onClick={() => setAll(true)}>Show all</button>
        </p>
      )}
    </>
  );
}

function HexBody({ bytes, className }: { bytes: Uint8Array; className: string }) {
  const [all, setAll] = useState(false);
  const capped = !all && bytes.length > HEX_PREVIEW_BYTES;
  return (
    <>
      <p class="quiet">Not valid UTF-8: shown as a hex dump of the exact bytes.</p>
      <pre class={`${className} hex`} tabIndex={0}>{hexDump(bytes, capped ? HEX_PREVIEW_BYTES : bytes.length)}</pre>
      {capped && <p class="quiet">Showing the first {HEX_PREVIEW_BYTES.toLocaleString()} of {bytes.length.toLocaleString()} bytes. <button type="button" class="link" onClick={() => setAll(true)}>Show all</button></p>}
    </>
  );
}

/**
 * A body by its content type: JSON pretty-printed and highlighted (or raw, as sent),
 * forms as a table, XML indented, invalid UTF-8 as a hex dump; with a copy button.
 */
export function BodyView({ body, encoding, contentType, className, limit, label }: {
  body: string | undefined; encoding: 'utf8' | 'base64' | undefined; contentType: string | null;
  className: string; limit?: number; label: string;
}) {
  const [raw, setRaw] = useState(false);
  const view = viewOfBody(body, encoding, contentType);
  if (view.kind === 'empty') return <p class={`quiet ${className}`}>No body.</p>;
  const tools = (
    <div class="body-tools">
      {view.kind === 'json' && (
        <span class="segmented" role="group" aria-label={`Show the ${label} as`}>
          <button type="button" aria-pressed={raw ? 'false' : 'true'} onClick={() => setRaw(false)}>Pretty</button>
          <button type="button" aria-pressed={raw ? 'true' : 'false'} onClick={() => setRaw(true)}>Raw</button>
        </span>
      )}
      <CopyButton text={() => (view.kind === 'json' && !raw ? view.text : body ?? '')} what={label} />
    </div>
  );
  switch (view.kind) {
    case 'binary': return <div class="body">{tools}<HexBody bytes={view.bytes} className={className} /></div>;
    case 'form': return (
      <div class="body">
        {tools}
        <div class="scroll">
          <table class={`${className} form-fields`}>
            <caption class="quiet">Form fields</caption>
            <thead><tr><th scope="col">Field</th><th scope="col">Value</th></tr></thead>
            <tbody>{view.fields.map(([name, value], index) => <tr key={index}><td class="mono">{name}</td><td>{value}</td></tr>)}</tbody>
          </table>
        </div>
      </div>
    );
    default: return (
      <div class="body">
        {tools}
        {view.kind === 'json' && !raw
          ? <CappedText key="pretty" text={view.text} className={`${className} body-json`} limit={limit} json />
          : <CappedText key="raw" text={view.kind === 'json' ? body! : view.text} className={`${className} body-${view.kind}`} limit={limit} />}
      </div>
    );
  }
}

export function EventBody({ event }: { event: HookEvent }) {
  return <BodyView body={event.body} encoding={event.body_encoding} contentType={event.content_type} className="event-body" label="body" />;
}

function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n');
}

function HeaderTable({ headers, textClass, label }: { headers: Record<string, string>; textClass: string; label: string }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p class="quiet">No headers.</p>;
  return (
    <div class="headers-block">
      <div class="body-tools"><CopyButton text={() => headerLines(headers)} what={label} /></div>
      <div class="scroll">
        <table class="headers">
          <thead><tr><th scope="col">Header</th><th scope="col">Value</th></tr></thead>
          <tbody>{entries.map(([name, value]) => <tr key={name}><td class="mono header-name">{name}</td><td class="mono"><CappedValue text={value} /></td></tr>)}</tbody>
        </table>
      </div>
      {/* The same headers as lines, for screen readers' copy and for tests that read them as text. */}
      <pre class={`${textClass} visually-hidden`}>{entries.map(([name, value]) => `${name}: ${value.slice(0, BODY_PREVIEW_CHARS)}`).join('\n')}</pre>
    </div>
  );
}

function CappedValue({ text }: { text: string }) {
  const [all, setAll] = useState(false);
  if (all || text.length <= 2048) return <>{text}</>;
  return <>{text.slice(0, 2048)}… <button type="button" class="link" onClick={() => setAll(true)}>Show all {text.length.toLocaleString()} characters</button></>;
}


function contentTypeOf(headers: Record<string, string> | null | undefined): string | null {
  if (!headers) return null;
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type');
  return entry?.[1] ?? null;
}

function AttemptExchange({ attempt, event }: { attempt: Attempt; event: HookEvent }) {
  const request = attempt.request;
  return (
    <div class="exchange">
      <section class="exchange-part attempt-request" aria-label={`Request of attempt ${attempt.n}`}>
        <h4>Request Hook sent</h4>
        {request ? (
          <>
            <HeaderTable headers={request.headers} textClass="request-headers" label="request headers" />
            {request.body_is_event_body
              ? <p class="quiet request-body-note">Body: the event's body, unchanged.</p>
              : (
                <>
                  <BodyView body={request.body ?? undefined} encoding={request.body_encoding ?? undefined} contentType={contentTypeOf(request.headers) ?? event.content_type} className="request-body" limit={16 * 1024} label="request body" />
                  {request.body_truncated && <p class="quiet">The relay keeps the first 4 KiB of a transformed body: the rest was sent but is not shown.</p>}
                </>
              )}
          </>
        ) : <p class="quiet">Not recorded for this attempt (attempts made before the relay kept requests).</p>}
      </section>
      <section class="exchange-part attempt-response" aria-label={`Response to attempt ${attempt.n}`}>
        <h4>Response {attempt.response_status !== null ? <span class="mono">{attempt.response_status}</span> : null}</h4>
        {attempt.response_headers
          ? <HeaderTable headers={attempt.response_headers} textClass="response-headers" label="response headers" />
          : attempt.response_status !== null && <p class="quiet">Headers not recorded for this attempt.</p>}
        {attempt.response_body
          ? <BodyView body={attempt.response_body} encoding="utf8" contentType={contentTypeOf(attempt.response_headers)} className="response-body" limit={4096} label="response body" />
          : <p class="quiet">{attempt.response_status === null ? 'No response.' : 'No response body.'}</p>}
      </section>
    </div>
  );
}

function AttemptRow({ attempt, event }: { attempt: Attempt; event: HookEvent }) {
  const ok = isSuccessStatus(attempt.response_status);
  // The exchange renders only once opened: an event with many attempts stays quick to show.
  const [open, setOpen] = useState(false);
  const hasExchange = Boolean(attempt.response_body || attempt.request || attempt.response_headers);
  return (
    <li class="attempt" data-ok={String(ok)} data-attempt-id={attempt.id}>
      <span class={`attempt-dot ${ok ? 'ok' : 'error'}`} aria-hidden="true" />
      <div class="attempt-line">
        <span class="attempt-n">Attempt {attempt.n}</span>
        <span class={`attempt-result ${ok ? 'ok' : 'error'}`}>{ok ? '✓' : '✕'} <span class="attempt-status">{attempt.response_status ?? 'no answer'}</span></span>
        <span class="quiet">{attempt.duration_ms} ms</span>
        <span class="quiet">{attempt.trigger}</span>
        <RelativeTime iso={attempt.started_at} className="quiet" />
      </div>
      {attempt.error && <p class="error attempt-error">{attempt.error}</p>}
      {hasExchange && (
        <details class="attempt-detail" onToggle={(toggle) => setOpen((toggle.currentTarget as HTMLDetailsElement).open)}>
          <summary>Request and response</summary>
          {open && <AttemptExchange attempt={attempt} event={event} />}
        </details>
      )}
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

/** "Next attempt in 2 min (14:05:12)" for a retrying delivery. */
function NextAttempt({ at }: { at: string }) {
  const now = useNow();
  const when = Date.parse(at);
  return (
    <p class="next-attempt">
      Next attempt {when - now < 1000 ? 'due now' : relativeText(when, now)} (<time dateTime={at} title={new Date(at).toLocaleString()}>{clockText(at)}</time>)
    </p>
  );
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
  const query = event.query ? [...new URLSearchParams(event.query)] : [];
  return (
    <div class="inspector" data-event-id={event.id}>
      <dl class="facts">
        <div><dt>Status</dt><dd><StatusBadge status={event.status} /></dd></div>
        <div><dt>Event ID</dt><dd class="id-fact"><span class="mono event-id">{event.id}</span> <CopyButton text={event.id} what="event ID" /></dd></div>
        <div><dt>Type</dt><dd class="mono">{event.type ?? '(no type)'}</dd></div>
        {endpointName && <div><dt>Endpoint</dt><dd>{endpointName}</dd></div>}
        <div><dt>Request</dt><dd class="mono">{event.method} {event.path || '/'}</dd></div>
        <div><dt>Received</dt><dd><RelativeTime iso={event.received_at} /> <span class="quiet">· {new Date(event.received_at).toLocaleString()}</span></dd></div>
        <div><dt>Size</dt><dd class="event-size">{formatSize(event.size)}</dd></div>
        <div><dt>Content type</dt><dd class="mono">{event.content_type ?? '(none)'}</dd></div>
      </dl>
      {event.status === 'pending' && (pendingHelp ?? (deliveries.length === 0 ? <p class="pending-reason"><WithCommands text={pendingReason(event, undefined, endpointName)!} /></p> : null))}
      {actions}
      {(deliveries.length > 0 || attempts.length > 0) && <h3>Deliveries</h3>}
      {deliveries.map((delivery) => {
        const reason = pendingReason(event, delivery, endpointName);
        const state = replayState[delivery.destination_id];
        return (
          <section class="delivery" key={delivery.destination_id} data-destination-id={delivery.destination_id} aria-label={`Delivery to ${destinationLabel(delivery)}`}>
            <div class="delivery-head">
              <StatusBadge status={delivery.status} />
              <span class="mono destination">{destinationLabel(delivery)}</span>
              <span class="quiet">{delivery.attempt_count} {delivery.attempt_count === 1 ? 'attempt' : 'attempts'}</span>
              {onReplay && !delivery.destination_deleted_at && (
                <button type="button" class="replay" onClick={() => onReplay(delivery.destination_id)} disabled={state === 'sending'}>
                  Replay to this destination
                </button>
              )}
            </div>
            {delivery.status === 'retrying' && delivery.next_attempt_at && <NextAttempt at={delivery.next_attempt_at} />}
            {state && state !== 'sending' && <p class="replay-result" role="status">{state}</p>}
            {reason && <p class="pending-reason"><WithCommands text={reason} /></p>}
            <ol class="timeline">{attempts.filter((attempt) => attempt.destination_id === delivery.destination_id).map((attempt) => <AttemptRow key={attempt.id} attempt={attempt} event={event} />)}</ol>
          </section>
        );
      })}
      {looseAttempts.length > 0 && <ol class="timeline">{looseAttempts.map((attempt) => <AttemptRow key={attempt.id} attempt={attempt} event={event} />)}</ol>}
      <h3>Body</h3>
      <EventBody event={event} />
      <h3>Headers</h3>
      {event.headers ? <HeaderTable headers={event.headers} textClass="event-headers" label="headers" /> : <p class="quiet">No headers.</p>}
      <h3>Query</h3>
      {query.length > 0 ? (
        <div class="scroll"><table class="query"><thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
          <tbody>{query.map(([name, value], index) => <tr key={index}><td class="mono">{name}</td><td class="mono">{value}</td></tr>)}</tbody></table></div>
      ) : <p class="quiet">No query string.</p>}
    </div>
  );
}
