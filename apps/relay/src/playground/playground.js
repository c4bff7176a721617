// The playground page: starts (or resumes) a session, shows the ingest URL, sends test
// events, and lists incoming events live over a WebSocket. Plain browser JavaScript; an
// opened event is shown by the console's inspector (src/console/ui/inspector-entry.tsx).
import { renderInspector } from '/console/assets/inspector.js';

const TOKEN_KEY = 'hook.playground.token';
const EMPTY_TYPE_MESSAGE = 'An event type cannot be empty';
const RECONNECT_MAX_MS = 10_000;

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem(TOKEN_KEY);
const rows = new Map();
/** The events shown, by id: an open row's inspector is drawn again when its status changes. */
const events = new Map();
let claimed = false;

async function call(method, path, body) {
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => null);
  return { ok: response.ok, status: response.status, data };
}

function problemText(result) {
  const problem = result.data;
  if (problem && problem.detail) return problem.fix ? `${problem.detail}. ${problem.fix}` : problem.detail;
  return `The relay answered ${result.status}.`;
}

async function startSession() {
  if (token) {
    const existing = await call('GET', '/playground/session');
    if (existing.ok) return existing.data;
  }
  const response = await fetch('/playground/session', { method: 'POST' });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new Error(problemText({ status: response.status, data }));
  token = data.token;
  sessionStorage.setItem(TOKEN_KEY, token);
  return data;
}

function showSession(session) {
  $('ingest-url').value = session.endpoint.url;
  $('curl-example').textContent =
    `curl -X POST '${session.endpoint.url}' \\\n  -H 'content-type: application/json' \\\n  -H 'x-event-type: order.created' \\\n  -d '{"id": 1, "amount": 4200}'`;
  $('expires').textContent = session.expires_at
    ? `This playground and its events are removed at ${new Date(session.expires_at).toLocaleString()} unless you claim it.`
    : 'This playground is claimed: it belongs to your account and does not expire.';
  if (session.claimed) $('claim-button').disabled = true;
  claimed = session.claimed;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(row, status) {
  const badge = row.querySelector('.event-status');
  badge.dataset.status = status;
  badge.textContent = status;
  const event = events.get(row.dataset.eventId);
  if (event && event.status !== status) {
    event.status = status;
    showInspector(row);
  }
}

/** Draws the inspector of an open row (a closed one is drawn when it opens). */
function showInspector(row) {
  const details = row.querySelector('details');
  if (details.open) renderInspector(row.querySelector('.inspector-slot'), events.get(row.dataset.eventId), { claimed });
}

function showEvent(event) {
  const existing = rows.get(event.id);
  if (existing) {
    setStatus(existing, event.status);
    return;
  }
  const row = element('li');
  row.dataset.eventId = event.id;
  const details = element('details');
  const summary = element('summary');
  summary.append(
    element('span', 'event-type', event.type ?? '(no type)'),
    element('span', 'event-method', `${event.method} ${event.path || '/'}`),
    element('span', 'event-status'),
    element('time', 'quiet', new Date(event.received_at).toLocaleTimeString()),
  );
  details.append(summary, element('div', 'inspector-slot'));
  details.addEventListener('toggle', () => showInspector(row));
  row.append(details);
  events.set(event.id, { ...event });
  setStatus(row, event.status);
  rows.set(event.id, row);
  $('events-empty').hidden = true;
  // Newest first: an event goes above every older one already shown.
  const after = [...$('events').children].find((other) => other.dataset.eventId < event.id);
  $('events').insertBefore(row, after ?? null);
}

async function loadEvents() {
  const result = await call('GET', '/playground/events');
  if (result.ok) for (const event of result.data.data.slice().reverse()) showEvent(event);
}

function connect(delayMs = 500) {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${location.host}/playground/stream?token=${encodeURIComponent(token)}`);
  socket.addEventListener('open', () => {
    $('session-status').textContent = 'Live: new events appear below as they arrive.';
    delayMs = 500;
    loadEvents(); // whatever arrived while the socket was down
  });
  socket.addEventListener('message', (message) => {
    const data = JSON.parse(message.data);
    if (data.type === 'event.received') showEvent(data.event);
    if (data.type === 'attempt.finished') {
      const row = rows.get(data.event_id);
      if (row) setStatus(row, data.event_status);
    }
  });
  socket.addEventListener('close', () => {
    $('session-status').textContent = 'Connection lost; reconnecting…';
    setTimeout(() => connect(Math.min(delayMs * 2, RECONNECT_MAX_MS)), delayMs);
  });
}

function showSendError(message, field) {
  $('send-error').textContent = message;
  for (const id of ['event-type', 'payload']) $(id).setAttribute('aria-invalid', String(id === field));
  if (field) $(field).focus();
}

async function sendTestEvent(submit) {
  submit.preventDefault();
  const type = $('event-type').value.trim();
  const payload = $('payload').value;
  if (type === '') return showSendError(EMPTY_TYPE_MESSAGE, 'event-type');
  try {
    JSON.parse(payload);
  } catch (error) {
    return showSendError(`The payload is not valid JSON: ${error.message}`, 'payload');
  }
  showSendError('', null);
  const result = await call('POST', '/playground/events', { type, payload });
  if (!result.ok) {
    const field = result.data?.code === 'event_type_empty' ? 'event-type' : result.data?.code === 'payload_not_json' ? 'payload' : null;
    return showSendError(problemText(result), field);
  }
  $('session-status').textContent = `Sent ${type} (${result.data.id}).`;
}

async function claim() {
  $('claim-error').textContent = '';
  $('claim-button').disabled = true;
  const result = await call('POST', '/playground/claim');
  if (!result.ok) {
    $('claim-error').textContent = problemText(result);
    $('claim-button').disabled = result.status === 409;
    return;
  }
  $('api-key').value = result.data.api_key;
  $('login-command').textContent = `hook login --api-key ${result.data.api_key} --api-url ${location.origin}`;
  claimed = true;
  for (const row of rows.values()) showInspector(row);
  $('claim-result').hidden = false;
  $('expires').textContent = 'This playground is claimed: it belongs to your account and does not expire.';
  $('api-key').focus();
}

async function copy(click) {
  const target = $(click.currentTarget.dataset.copy);
  const text = 'value' in target ? target.value : target.textContent;
  try {
    await navigator.clipboard.writeText(text);
    $('copy-status').textContent = 'Copied.';
  } catch {
    if ('select' in target) target.select();
    $('copy-status').textContent = 'Select the text and copy it.';
  }
}

async function main() {
  for (const button of document.querySelectorAll('[data-copy]')) button.addEventListener('click', copy);
  $('send-form').addEventListener('submit', sendTestEvent);
  $('claim-button').addEventListener('click', claim);
  try {
    showSession(await startSession());
  } catch (error) {
    $('session-status').textContent = `Could not start a playground: ${error.message}`;
    return;
  }
  await loadEvents();
  connect();
}

main();
