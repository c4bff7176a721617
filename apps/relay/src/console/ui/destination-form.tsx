// Adding a destination to an endpoint (POST /v1/endpoints/{id}/destinations): where it
// sends (a URL, hook listen, or a broker) and its delivery options (docs/delivery.md#delivery-options).
// Secrets typed here (passwords, tokens, client secrets and keys) are sent once and never
// shown again: the relay answers with `secret_set` only.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, call, type Destination } from './api.ts';
import { describedBy, FieldProblem, integerOf, messagesOf, textOf, useSubmit, type FieldMessages } from './forms.ts';

const TYPES = [
  { value: 'url', label: 'URL: signed HTTPS POSTs' },
  { value: 'cli', label: 'hook listen: held for the CLI' },
  { value: 'amqp', label: 'RabbitMQ (amqp)' },
  { value: 'nats', label: 'NATS JetStream (nats)' },
  { value: 'redis', label: 'Redis Streams (redis)' },
  { value: 'mqtt', label: 'MQTT' },
] as const;

const URL_PLACEHOLDER: Record<string, string> = {
  url: 'https://example.com/hooks', amqp: 'amqps://rabbit.example.com:5671/vhost', nats: 'tls://nats.example.com:4222',
  redis: 'rediss://redis.example.com:6380/0', mqtt: 'mqtts://mqtt.example.com:8883',
};

/** Every field the form has, as a problem document's errors[] name them after `body.` (or `body.destination.`). */
const FIELDS = [
  'type', 'url', 'exchange', 'routing_key', 'subject', 'stream', 'max_len', 'topic',
  'auth', 'auth.type', 'auth.username', 'auth.password', 'auth.token', 'auth.headers', 'auth.token_url', 'auth.client_id', 'auth.client_secret', 'auth.scope', 'auth.audience',
  'tls', 'tls.client_certificate', 'tls.client_key', 'tls.ca', 'signature_scheme', 'ordering', 'ordering.key', 'ordering.on_give_up',
  'delay_seconds', 'rate_per_second', 'max_in_flight',
] as const;

interface FieldProps { form: string; name: string; label: string; messages: FieldMessages; hint?: string; children?: ComponentChildren }

/** A labelled input (or the control given as children) with its message and hint tied to it. */
function Field({ form, name, label, messages, hint, children, ...input }: FieldProps & Record<string, unknown>) {
  const id = `${form}-${name.replace(/\./g, '-')}`;
  return (
    <div class="field" data-field={name}>
      <label for={id}>{label}</label>
      {children ?? <input id={id} name={name} type="text" {...input} {...describedBy(messages, name, id)} />}
      {hint && <p class="quiet hint">{hint}</p>}
      <p id={`${id}-message`} class="error field-message" role="alert">{messages[name]}</p>
    </div>
  );
}

/** `name: value` lines as an object of headers. */
function headerLines(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new FieldProblem('auth.headers', `Line ${index + 1} is not "name: value".`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The request body the form describes. */
function bodyOf(form: HTMLFormElement, type: string): Record<string, unknown> {
  const text = (name: string) => textOf(form, name);
  const body: Record<string, unknown> = {};
  if (type === 'cli') body.destination = { type: 'cli' };
  else {
    const destination: Record<string, unknown> = { type, url: text('url') };
    if (type === 'amqp') Object.assign(destination, { exchange: text('exchange'), routing_key: text('routing_key') });
    if (type === 'nats') destination.subject = text('subject');
    if (type === 'redis') Object.assign(destination, { stream: text('stream'), ...(text('max_len') ? { max_len: integerOf(form, 'max_len') } : {}) });
    if (type === 'mqtt') destination.topic = text('topic');
    body.destination = destination;

    const authType = text('auth.type');
    if (authType === 'basic') body.auth = { type: 'basic', username: text('auth.username'), password: (form.elements.namedItem('auth.password') as HTMLInputElement).value };
    if (authType === 'bearer') body.auth = { type: 'bearer', token: text('auth.token') };
    if (authType === 'headers') body.auth = { type: 'headers', headers: headerLines((form.elements.namedItem('auth.headers') as HTMLTextAreaElement).value) };
    if (authType === 'oauth2') {
      body.auth = {
        type: 'oauth2', token_url: text('auth.token_url'), client_id: text('auth.client_id'), client_secret: text('auth.client_secret'),
        ...(text('auth.scope') ? { scope: text('auth.scope') } : {}), ...(text('auth.audience') ? { audience: text('auth.audience') } : {}),
      };
    }
    const tls = Object.fromEntries(['client_certificate', 'client_key', 'ca'].map((name) => [name, text(`tls.${name}`)]).filter(([, value]) => value));
    if (Object.keys(tls).length > 0) body.tls = tls;
    const orderingMode = text('ordering.mode');
    if (orderingMode !== 'off') {
      const key = orderingMode === 'header' ? { header: text('ordering.key') } : orderingMode === 'json_field' ? { json_field: text('ordering.key') } : null;
      body.ordering = { key, on_give_up: text('ordering.on_give_up') };
    }
    const delay = integerOf(form, 'delay_seconds');
    if (delay !== null) body.delay_seconds = delay;
  }
  if (text('signature_scheme') === 'v1a') body.signature_scheme = 'v1a';
  const rate = integerOf(form, 'rate_per_second');
  if (rate !== null) body.rate_per_second = rate;
  const inFlight = integerOf(form, 'max_in_flight');
  if (inFlight !== null) body.max_in_flight = inFlight;
  return body;
}

export function DestinationForm({ endpointId, onAdded, onCancel }: { endpointId: string; onAdded: (destination: Destination) => void; onCancel: () => void }) {
  const [type, setType] = useState('url');
  const [authType, setAuthType] = useState('none');
  const [orderingMode, setOrderingMode] = useState('off');
  const submit = useSubmit({ prefixes: ['body.destination.', 'body.'], known: FIELDS });
  const f = 'add-destination';
  const m = submit.messages;
  const broker = type !== 'url' && type !== 'cli';
  const add = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const form = submitEvent.currentTarget as HTMLFormElement;
    await submit.run(async () => {
      try {
        onAdded(await call<Destination>('POST', `/v1/endpoints/${endpointId}/destinations`, bodyOf(form, type)));
      } catch (failure) {
        // A refused address has no errors[]: it is about the URL (or the OAuth2 token URL it names).
        if (failure instanceof ApiError && failure.problem.code === 'destination_not_allowed') {
          const field = /token/i.test(failure.problem.detail ?? '') && authType === 'oauth2' ? 'auth.token_url' : 'url';
          throw new FieldProblem(field, messagesOf(failure)['']!);
        }
        throw failure;
      }
    });
  };
  return (
    <form id={f} class="destination-form card" onSubmit={add} noValidate aria-labelledby={`${f}-heading`}>
      <h3 id={`${f}-heading`}>Add a destination</h3>
      <p class="quiet">It gets every event received from now on. Secrets you type here are sent once and never shown again.</p>
      <Field form={f} name="type" label="Sends to" messages={m}>
        <select id={`${f}-type`} name="type" value={type} onChange={(change) => { setType((change.currentTarget as HTMLSelectElement).value); setAuthType('none'); }}>
          {TYPES.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
        </select>
      </Field>
      {type !== 'cli' && <Field form={f} name="url" label={type === 'url' ? 'URL' : 'Broker URL (no password: give it under Auth)'} messages={m} placeholder={URL_PLACEHOLDER[type]} required />}
      {type === 'amqp' && (
        <div class="field-row">
          <Field form={f} name="exchange" label="Exchange ('' is the default exchange)" messages={m} placeholder="hook" />
          <Field form={f} name="routing_key" label="Routing key" messages={m} placeholder="orders" />
        </div>
      )}
      {type === 'nats' && <Field form={f} name="subject" label="Subject (a JetStream stream must capture it)" messages={m} placeholder="hook.orders" />}
      {type === 'redis' && (
        <div class="field-row">
          <Field form={f} name="stream" label="Stream" messages={m} placeholder="hook:orders" />
          <Field form={f} name="max_len" label="Trim to about (entries, optional)" messages={m} inputMode="numeric" />
        </div>
      )}
      {type === 'mqtt' && <Field form={f} name="topic" label="Topic (QoS 1, no wildcards)" messages={m} placeholder="hook/orders" />}
      {type === 'cli' && <p class="quiet">Events wait, pending, until <code>hook listen</code> takes them for this endpoint.</p>}

      {type !== 'cli' && (
        <fieldset>
          <legend>Auth</legend>
          <Field form={f} name="auth.type" label="How deliveries sign in" messages={m}>
            <select id={`${f}-auth-type`} name="auth.type" value={authType} onChange={(change) => setAuthType((change.currentTarget as HTMLSelectElement).value)}>
              <option value="none">None</option>
              <option value="basic">{broker ? "Basic: the broker's user" : 'Basic (username and password)'}</option>
              {!broker && <option value="bearer">Bearer token</option>}
              {!broker && <option value="headers">Static headers</option>}
              {!broker && <option value="oauth2">OAuth2 client credentials</option>}
            </select>
          </Field>
          {authType === 'basic' && (
            <div class="field-row">
              <Field form={f} name="auth.username" label="Username" messages={m} autocomplete="off" />
              <Field form={f} name="auth.password" label="Password (write-only)" messages={m} type="password" autocomplete="new-password" />
            </div>
          )}
          {authType === 'bearer' && <Field form={f} name="auth.token" label="Token (write-only)" messages={m} type="password" autocomplete="off" />}
          {authType === 'headers' && (
            <Field form={f} name="auth.headers" label="Headers, one per line as name: value (write-only; at most 20)" messages={m}>
              <textarea id={`${f}-auth-headers`} name="auth.headers" rows={3} placeholder="x-api-key: …" {...describedBy(m, 'auth.headers', `${f}-auth-headers`)} />
            </Field>
          )}
          {authType === 'oauth2' && (
            <>
              <Field form={f} name="auth.token_url" label="Token URL" messages={m} placeholder="https://auth.example.com/oauth/token" />
              <div class="field-row">
                <Field form={f} name="auth.client_id" label="Client id" messages={m} autocomplete="off" />
                <Field form={f} name="auth.client_secret" label="Client secret (write-only)" messages={m} type="password" autocomplete="off" />
              </div>
              <div class="field-row">
                <Field form={f} name="auth.scope" label="Scope (optional)" messages={m} />
                <Field form={f} name="auth.audience" label="Audience (optional)" messages={m} />
              </div>
            </>
          )}
          <p class="error field-message" role="alert">{m.auth}</p>
        </fieldset>
      )}

      {type !== 'cli' && (
        <details class="options">
          <summary>Client certificate (mTLS) and CA</summary>
          {(['client_certificate', 'client_key', 'ca'] as const).map((name) => (
            <Field key={name} form={f} name={`tls.${name}`} label={name === 'client_certificate' ? 'Client certificate (PEM, its chain after it)' : name === 'client_key' ? 'Client key (PEM, write-only)' : 'CA to trust instead of the public ones (PEM)'} messages={m}>
              <textarea id={`${f}-tls-${name}`} name={`tls.${name}`} rows={3} spellcheck={false} placeholder="-----BEGIN …" {...describedBy(m, `tls.${name}`, `${f}-tls-${name}`)} />
            </Field>
          ))}
          <p class="error field-message" role="alert">{m.tls}</p>
        </details>
      )}

      <details class="options">
        <summary>Signature, ordering, delay and limits</summary>
        <Field form={f} name="signature_scheme" label="Signature scheme" messages={m}>
          <select id={`${f}-signature_scheme`} name="signature_scheme">
            <option value="v1">v1: HMAC-SHA256 with a shared secret</option>
            <option value="v1a">v1a: ed25519; receivers verify with a public key</option>
          </select>
        </Field>
        {type !== 'cli' && (
          <>
            <Field form={f} name="ordering.mode" label="Ordering: one event at a time per key" messages={m}>
              <select id={`${f}-ordering-mode`} name="ordering.mode" value={orderingMode} onChange={(change) => setOrderingMode((change.currentTarget as HTMLSelectElement).value)}>
                <option value="off">Off: deliver concurrently</option>
                <option value="header">Key from a header</option>
                <option value="json_field">Key from a JSON body field</option>
                <option value="all">Every event in one order</option>
              </select>
            </Field>
            {(orderingMode === 'header' || orderingMode === 'json_field') && (
              <Field form={f} name="ordering.key" label={orderingMode === 'header' ? 'Header name' : 'JSON field (dotted for a nested one)'} messages={m} placeholder={orderingMode === 'header' ? 'x-customer-id' : 'data.customer'} />
            )}
            {orderingMode !== 'off' && (
              <Field form={f} name="ordering.on_give_up" label="When an event gives up" messages={m}>
                <select id={`${f}-ordering-on_give_up`} name="ordering.on_give_up">
                  <option value="block">Block its key until it is replayed or unblocked</option>
                  <option value="skip">Skip it; the next event of its key goes</option>
                </select>
              </Field>
            )}
            <p class="error field-message" role="alert">{m.ordering}</p>
            <Field form={f} name="delay_seconds" label="Delay each event (seconds, 1 to 86,400; optional)" messages={m} inputMode="numeric" />
          </>
        )}
        <div class="field-row">
          <Field form={f} name="rate_per_second" label="At most per second (optional)" messages={m} inputMode="numeric" />
          <Field form={f} name="max_in_flight" label="At most in flight (optional)" messages={m} inputMode="numeric" />
        </div>
      </details>
      <p class="error" role="alert">{m['']}</p>
      <div class="toolbar">
        <button type="submit" class="primary" disabled={submit.busy}>Add destination</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
