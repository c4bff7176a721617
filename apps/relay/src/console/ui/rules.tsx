// A destination's rules: its transformation (JavaScript, docs/transformations.md) and its
// filter (match schemas, docs/filters.md), edited and tried before they are saved. "Test"
// runs the code with the relay's own sandbox (POST /v1/transformations/test) on an event
// from this endpoint's history or a pasted JSON body, then matches the filter against what
// the code returned, as delivery does (apps/relay/src/delivery/prepare.ts). Saving is
// PATCH /v1/destinations/{id}, which checks both again.
import { useState } from 'preact/hooks';
import { call, type Destination, type HookEvent } from './api.ts';
import { describedBy, FieldProblem, jsonOf, useSubmit } from './forms.ts';
// The filter matcher is pure and imports nothing at run time, so the browser runs the very
// function delivery runs. It comes by path because @hook/core's index also carries Node-only
// modules (signing, secrets) that a browser bundle cannot take.
import { matchesFilter, parseFilterQuery, type FilterRequest } from '../../../../../packages/core/src/filters.ts';
import { isJsonContentType } from '../../../../../packages/core/src/http-rules.ts';

const EXAMPLE_CODE = `addHandler('transform', (request, context) => {
  // request: { method, path, query, headers, body }; return what is delivered
  return request;
});`;

/** The request the code and filter see, as the relay builds it from a stored event or a given body. */
interface RuleInput { method: string; path: string; query: string; headers: Record<string, string>; body: unknown }

interface TestOutcome {
  transformation?: { ok: true; request: RuleInput; type?: string | null; logs: { level: string; message: string }[] }
    | { ok: false; logs: { level: string; message: string }[]; error: { message: string; line: number | null } };
  /** Whether the filter passes what the code returned (or the input without code); undefined without a filter. */
  delivered?: boolean;
}

/** A stored event as the code and filter see it: its body parsed when it is JSON, else its text. */
function inputOfEvent(event: HookEvent): RuleInput {
  const text = event.body_encoding === 'base64' ? atob(event.body ?? '') : event.body ?? '';
  let body: unknown = text;
  if (isJsonContentType(event.content_type) && text.length > 0) {
    try { body = JSON.parse(text); } catch { /* claims JSON and is not: the text, as delivery does */ }
  }
  return { method: event.method, path: event.path || '/', query: event.query, headers: { ...(event.headers ?? {}) }, body };
}

function filterRequestOf(input: RuleInput): FilterRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) headers[name.toLowerCase()] = String(value);
  return { body: input.body, headers, query: parseFilterQuery(typeof input.query === 'string' ? input.query : ''), path: typeof input.path === 'string' ? input.path : '/' };
}

function pretty(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** Line numbers beside the code, so an error's line is easy to find. */
function LineNumbers({ text, errorLine }: { text: string; errorLine: number | null }) {
  const count = Math.max(1, text.split('\n').length);
  return (
    <ol class="line-numbers" aria-hidden="true">
      {Array.from({ length: count }, (_, index) => <li key={index} class={index + 1 === errorLine ? 'error-line' : undefined}>{index + 1}</li>)}
    </ol>
  );
}

export function RulesEditor({ destination, events, onSaved }: { destination: Destination; events: HookEvent[]; onSaved: (destination: Destination) => void }) {
  const [code, setCode] = useState(destination.transformation?.code ?? '');
  const [filterText, setFilterText] = useState(destination.filter ? JSON.stringify(destination.filter, null, 2) : '');
  const [source, setSource] = useState(events[0]?.id ?? 'pasted');
  const [pasted, setPasted] = useState('{\n  "type": "order.created"\n}');
  const [outcome, setOutcome] = useState<TestOutcome | null>(null);
  const test = useSubmit({ known: ['transformation.code', 'filter', 'pasted'] });
  const save = useSubmit({ known: ['transformation.code', 'filter'] });
  const id = `rules-${destination.id}`;

  const runTest = () => test.run(async () => {
    setOutcome(null);
    const filter = jsonOf(filterText, 'filter');
    let input: RuleInput;
    let given: Record<string, unknown> | undefined;
    if (source === 'pasted') {
      const body = jsonOf(pasted, 'pasted');
      if (body === null) throw new FieldProblem('pasted', 'Paste a JSON body to test with, or pick an event.');
      input = { method: 'POST', path: '/', query: '', headers: { 'content-type': 'application/json' }, body };
      given = { method: 'POST', path: '/', query: '', headers: input.headers, body };
    } else {
      input = inputOfEvent(await call<HookEvent>('GET', `/v1/events/${source}`));
    }
    const result: TestOutcome = {};
    if (code.trim()) {
      result.transformation = await call('POST', '/v1/transformations/test', source === 'pasted' ? { code, request: given } : { code, event_id: source });
      if (result.transformation!.ok) input = result.transformation!.request;
    }
    if (filter !== null && (!result.transformation || result.transformation.ok)) result.delivered = matchesFilter(filter as Record<string, unknown>, filterRequestOf(input));
    setOutcome(result);
  });

  const saveRules = () => save.run(async () => {
    const filter = jsonOf(filterText, 'filter');
    const saved = await call<Destination>('PATCH', `/v1/destinations/${destination.id}`, {
      transformation: code.trim() ? { code } : null,
      filter: filter ?? null,
    });
    onSaved(saved);
    return `Saved. Events received from now on, and replays, go through ${code.trim() && filter !== null ? 'this transformation and filter' : code.trim() ? 'this transformation' : filter !== null ? 'this filter' : 'no rules'}.`;
  });

  const messages = { ...test.messages, ...save.messages };
  // A failed test gives the line; a refused save says it in its message ("line 3: …").
  const savedLine = /^line (\d+)/.exec(messages['transformation.code'] ?? '')?.[1];
  const errorLine = outcome?.transformation && !outcome.transformation.ok ? outcome.transformation.error.line : savedLine ? Number(savedLine) : null;
  const transformation = outcome?.transformation;
  return (
    <div class="rules" id={id}>
      <div class="field">
        <label for={`${id}-code`}>Transformation (JavaScript; empty for none)</label>
        <div class="code-editor">
          <LineNumbers text={code || ' '} errorLine={errorLine} />
          <textarea
            id={`${id}-code`} class="code transformation-code" rows={Math.min(24, Math.max(6, code.split('\n').length + 1))} spellcheck={false} autocomplete="off" wrap="off"
            placeholder={EXAMPLE_CODE} value={code} onInput={(input) => setCode((input.currentTarget as HTMLTextAreaElement).value)}
            {...describedBy(messages, 'transformation.code', `${id}-code`)}
          />
        </div>
        <p id={`${id}-code-message`} class="error field-message" role="alert">{messages['transformation.code']}</p>
        {!code && <button type="button" class="link" onClick={() => setCode(EXAMPLE_CODE)}>Start from an example</button>}
      </div>
      <div class="field">
        <label for={`${id}-filter`}>Filter (JSON match schemas; empty delivers everything)</label>
        <textarea
          id={`${id}-filter`} class="code filter-json" rows={Math.min(16, Math.max(4, filterText.split('\n').length + 1))} spellcheck={false} autocomplete="off"
          placeholder={'{"body": {"type": {"$startsWith": "order."}}}'} value={filterText} onInput={(input) => setFilterText((input.currentTarget as HTMLTextAreaElement).value)}
          {...describedBy(messages, 'filter', `${id}-filter`)}
        />
        <p id={`${id}-filter-message`} class="error field-message" role="alert">{messages.filter}</p>
      </div>

      <fieldset class="test-input">
        <legend>Test with</legend>
        <label for={`${id}-source`} class="visually-hidden">Test input</label>
        <select id={`${id}-source`} class="test-source" value={source} onChange={(change) => setSource((change.currentTarget as HTMLSelectElement).value)}>
          {events.map((event) => <option key={event.id} value={event.id}>{event.type ?? '(no type)'} · {new Date(event.received_at).toLocaleString()} · {event.id}</option>)}
          <option value="pasted">A JSON body I paste</option>
        </select>
        {source === 'pasted' && (
          <div class="field">
            <label for={`${id}-pasted`}>JSON body (sent as POST / with content-type application/json)</label>
            <textarea id={`${id}-pasted`} class="code pasted-json" rows={5} spellcheck={false} value={pasted} onInput={(input) => setPasted((input.currentTarget as HTMLTextAreaElement).value)} {...describedBy(messages, 'pasted', `${id}-pasted`)} />
            <p id={`${id}-pasted-message`} class="error field-message" role="alert">{messages.pasted}</p>
          </div>
        )}
      </fieldset>
      <p class="error" role="alert">{messages['']}</p>
      <div class="toolbar">
        <button type="button" class="test-rules" disabled={test.busy} onClick={runTest}>Test</button>
        <button type="button" class="primary save-rules" disabled={save.busy} onClick={saveRules}>Save rules</button>
        <span class="quiet" role="status">{save.note}</span>
      </div>

      {outcome && (
        <section class="test-result" aria-label="Test result" role="status">
          {transformation && !transformation.ok && (
            <p class="error transform-error">The transformation failed{transformation.error.line !== null ? ` on line ${transformation.error.line}` : ''}: {transformation.error.message}</p>
          )}
          {outcome.delivered !== undefined && (
            <p class={outcome.delivered ? 'filter-verdict delivered' : 'filter-verdict skipped'}>
              {outcome.delivered ? 'The filter matches: this event would be delivered.' : 'The filter does not match: this event would be skipped (status filtered).'}
            </p>
          )}
          {transformation?.ok && (
            <>
              <h4>What would be delivered</h4>
              <p class="mono transform-request-line">{transformation.request.method ?? 'POST'} {transformation.request.path || '/'}{transformation.request.query ? `?${transformation.request.query}` : ''}{transformation.type !== undefined ? ` · type ${transformation.type ?? '(none)'}` : ''}</p>
              <h5>Headers</h5>
              <pre class="transform-headers">{Object.entries(transformation.request.headers ?? {}).map(([name, value]) => `${name}: ${value}`).join('\n') || '(none)'}</pre>
              <h5>Body</h5>
              <pre class="transform-body">{pretty(transformation.request.body)}</pre>
            </>
          )}
          {!transformation && outcome.delivered === undefined && <p class="quiet">No transformation and no filter: the event is delivered as it was received.</p>}
          {transformation && transformation.logs.length > 0 && (
            <>
              <h5>Console output</h5>
              <pre class="transform-logs">{transformation.logs.map((log) => `${log.level}: ${log.message}`).join('\n')}</pre>
            </>
          )}
        </section>
      )}
    </div>
  );
}
