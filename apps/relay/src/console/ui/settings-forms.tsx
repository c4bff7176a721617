// An endpoint's ingest settings (docs/sources.md): signature verification, the provider
// handshake, dedupe and the custom response, each a small form that PATCHes
// /v1/endpoints/{id} with its one field (null turns it off). Secrets are write-only: the
// relay shows only that one is set and its last four characters.
import type { HandshakeProvider, VerificationProvider } from '@hook/core';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { call, type Endpoint } from './api.ts';
import { ConfirmButton } from './dialog.tsx';
import { describedBy, FieldProblem, integerOf, jsonOf, textOf, useSubmit, type FieldMessages } from './forms.ts';

// The providers (packages/core/src/providers/): the bundle cannot import the registry (it is
// Node code), so the choices are written here, and `satisfies` makes a provider added to or
// removed from the registry a type error until this list follows.
const VERIFICATION_PROVIDERS = Object.keys({
  github: true, stripe: true, shopify: true, slack: true, 'standard-webhooks': true, gitlab: true, hmac: true,
} satisfies Record<VerificationProvider, true>);
const HANDSHAKE_LABELS = {
  slack: 'Slack (url_verification)', meta: 'Meta: WhatsApp, Messenger, Instagram (needs the verify token)',
  graph: 'Microsoft Graph', dropbox: 'Dropbox',
  zoom: 'Zoom (needs the secret token)', twitter: 'X / Twitter CRC (needs the consumer secret)',
} satisfies Record<HandshakeProvider, string>;
const HANDSHAKE_PROVIDERS = Object.entries(HANDSHAKE_LABELS).map(([value, label]) => ({ value, label }));

type Setting = 'verification' | 'handshake' | 'dedupe' | 'response';

interface SettingFormProps {
  endpoint: Endpoint;
  setting: Setting;
  title: string;
  /** What is set now, in words; null when it is off. */
  current: string | null;
  help: ComponentChildren;
  /** The setting's value from the form (a FieldProblem for a mistake found here). */
  valueOf: (form: HTMLFormElement) => unknown;
  onSaved: (endpoint: Endpoint) => void;
  children: (messages: FieldMessages) => ComponentChildren;
}

/** One setting: what is set, a form to set it, and a confirmed "Turn off". */
function SettingForm({ endpoint, setting, title, current, help, valueOf, onSaved, children }: SettingFormProps) {
  const submit = useSubmit({ prefixes: [`body.${setting}.`, 'body.'] });
  const save = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const form = submitEvent.currentTarget as HTMLFormElement;
    await submit.run(async () => {
      onSaved(await call<Endpoint>('PATCH', `/v1/endpoints/${endpoint.id}`, { [setting]: valueOf(form) }));
      for (const secret of form.querySelectorAll<HTMLInputElement>('input[type="password"]')) secret.value = '';
      return 'Saved; it applies to requests from now on.';
    });
  };
  return (
    <section class={`setting card setting-${setting}`} aria-labelledby={`setting-${setting}-heading`}>
      <h3 id={`setting-${setting}-heading`}>{title}</h3>
      <p class="setting-current">{current === null ? <span class="quiet">Off.</span> : <><span class="badge ok">on</span> {current}</>}</p>
      <p class="quiet">{help}</p>
      <form id={`setting-${setting}-form`} onSubmit={save} noValidate>
        {children(submit.messages)}
        <p class="error" role="alert">{submit.messages['']}</p>
        <div class="toolbar">
          <button type="submit" class="primary" disabled={submit.busy}>Save</button>
          {current !== null && (
            <ConfirmButton label="Turn off…" class={`turn-off-${setting}`} title={`Turn off ${title.toLowerCase()}?`} confirmLabel="Turn off"
              onConfirm={async () => onSaved(await call<Endpoint>('PATCH', `/v1/endpoints/${endpoint.id}`, { [setting]: null }))}>
              <p>Requests to {endpoint.name} are taken {setting === 'verification' ? 'without checking their signature, and the stored secret is forgotten' : setting === 'handshake' ? 'without answering the provider\'s handshake, and its stored secret is forgotten' : setting === 'dedupe' ? 'and stored even when their key was seen before' : 'and answered with the default {"id", "status"} JSON'}.</p>
            </ConfirmButton>
          )}
          <span class="quiet" role="status">{submit.note}</span>
        </div>
      </form>
    </section>
  );
}

/** A text input; `value` is only where it starts (the form is read on submit, so a failed save keeps what was typed). */
function Input({ form, name, label, messages, hint, value, ...input }: { form: string; name: string; label: string; messages: FieldMessages; hint?: string; value?: string } & Record<string, unknown>) {
  const id = `${form}-${name}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} name={name} type="text" defaultValue={value} {...input} {...describedBy(messages, name, id)} />
      {hint && <p class="quiet hint">{hint}</p>}
      <p id={`${id}-message`} class="error field-message" role="alert">{messages[name]}</p>
    </div>
  );
}

/** A select: controlled when it has onChange (the form changes with it), else `value` is where it starts. */
function Select({ form, name, label, messages, options, value, onChange }: { form: string; name: string; label: string; messages: FieldMessages; options: readonly { value: string; label: string }[]; value?: string; onChange?: (value: string) => void }) {
  const id = `${form}-${name}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name} value={onChange ? value : undefined} onChange={onChange && ((change) => onChange((change.currentTarget as HTMLSelectElement).value))} {...describedBy(messages, name, id)}>
        {options.map((option) => <option key={option.value} value={option.value} selected={onChange ? undefined : option.value === value}>{option.label}</option>)}
      </select>
      <p id={`${id}-message`} class="error field-message" role="alert">{messages[name]}</p>
    </div>
  );
}

const plain = (values: readonly string[]) => values.map((value) => ({ value, label: value }));

function VerificationForm({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const set = endpoint.verification;
  const [provider, setProvider] = useState<string>(set?.provider ?? 'github');
  const f = `verification-${endpoint.id}`;
  return (
    <SettingForm
      endpoint={endpoint} setting="verification" title="Signature verification" onSaved={onSaved}
      current={set ? `${set.provider}, ${set.mode === 'flag' ? 'flags' : 'rejects'} requests whose signature is wrong (secret …${set.secret_hint ?? ''})` : null}
      help="Checks each request's signature at the ingest URL with the secret the sender signs with. Reject answers a bad signature 401 and stores nothing; flag stores it marked unverified."
      valueOf={(form) => {
        const tolerance = integerOf(form, 'tolerance_seconds');
        const value: Record<string, unknown> = { provider, secret: (form.elements.namedItem('secret') as HTMLInputElement).value, mode: textOf(form, 'mode') };
        if (!value.secret) throw new FieldProblem('secret', `Enter the ${provider} signing secret (it is needed every time you save: the stored one is never shown).`);
        if (tolerance !== null) value.tolerance_seconds = tolerance;
        if (provider === 'hmac') {
          for (const name of ['header', 'algorithm', 'encoding', 'prefix', 'signed', 'timestamp_header']) {
            const text = textOf(form, name);
            if (text) value[name] = text;
          }
        }
        return value;
      }}
    >
      {(messages) => (
        <>
          <Select form={f} name="provider" label="Sender" messages={messages} options={plain(VERIFICATION_PROVIDERS)} value={provider} onChange={setProvider} />
          <Input form={f} name="secret" label={`Signing secret${set?.secret_set ? ' (a new one, or the same again)' : ''}`} messages={messages} type="password" autocomplete="off" />
          <Select form={f} name="mode" label="A wrong signature" messages={messages} value={set?.mode ?? 'reject'} options={[{ value: 'reject', label: 'Reject it (401)' }, { value: 'flag', label: 'Store it, flagged' }]} />
          <Input form={f} name="tolerance_seconds" label="Timestamp tolerance (seconds; default 300)" messages={messages} inputMode="numeric" value={set?.tolerance_seconds === undefined ? '' : String(set.tolerance_seconds)} />
          {provider === 'hmac' && (
            <>
              <Input form={f} name="header" label="Signature header" messages={messages} placeholder="x-signature" value={String(set?.header ?? '')} />
              <Select form={f} name="algorithm" label="Algorithm" messages={messages} options={plain(['sha256', 'sha1', 'sha512'])} value={String(set?.algorithm ?? 'sha256')} />
              <Select form={f} name="encoding" label="Encoding" messages={messages} options={plain(['hex', 'base64'])} value={String(set?.encoding ?? 'hex')} />
              <Input form={f} name="prefix" label="Prefix before the signature (optional)" messages={messages} placeholder="sha256=" value={String(set?.prefix ?? '')} />
              <Select form={f} name="signed" label="Signed content" messages={messages} options={[{ value: 'body', label: 'The body' }, { value: 'timestamp.body', label: 'timestamp.body' }]} value={String(set?.signed ?? 'body')} />
              <Input form={f} name="timestamp_header" label="Timestamp header (with timestamp.body)" messages={messages} value={String(set?.timestamp_header ?? '')} />
            </>
          )}
        </>
      )}
    </SettingForm>
  );
}

function HandshakeForm({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const set = endpoint.handshake;
  const [provider, setProvider] = useState<string>(set?.provider ?? 'slack');
  const needsSecret = provider === 'meta' || provider === 'zoom' || provider === 'twitter';
  const f = `handshake-${endpoint.id}`;
  return (
    <SettingForm
      endpoint={endpoint} setting="handshake" title="Provider handshake" onSaved={onSaved}
      current={set ? `${set.provider}${set.secret_set ? ` (secret …${set.secret_hint ?? ''})` : ''}` : null}
      help="Answers the provider's challenge at the ingest URL when you register it (Slack's url_verification, Meta's hub.challenge, …); challenges are stored as filtered events and never delivered."
      valueOf={(form) => {
        const secret = (form.elements.namedItem('secret') as HTMLInputElement | null)?.value ?? '';
        if (needsSecret && !secret) throw new FieldProblem('secret', `${provider} needs its secret to answer the handshake.`);
        return needsSecret ? { provider, secret } : { provider };
      }}
    >
      {(messages) => (
        <>
          <Select form={f} name="provider" label="Provider" messages={messages} options={HANDSHAKE_PROVIDERS} value={provider} onChange={setProvider} />
          {needsSecret && <Input form={f} name="secret" label={provider === 'meta' ? 'Verify token' : provider === 'zoom' ? 'Secret token' : 'Consumer secret'} messages={messages} type="password" autocomplete="off" />}
        </>
      )}
    </SettingForm>
  );
}

function DedupeForm({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const set = endpoint.dedupe;
  const [source, setSource] = useState(set && 'json_field' in set ? 'json_field' : 'header');
  const f = `dedupe-${endpoint.id}`;
  const setValue = set ? ('header' in set ? set.header : set.json_field) : '';
  return (
    <SettingForm
      endpoint={endpoint} setting="dedupe" title="Duplicates" onSaved={onSaved}
      current={set ? ('header' in set ? `dropped by the header ${set.header}` : `dropped by the JSON field ${set.json_field}`) : null}
      help="A request whose key this endpoint already stored is answered with the original event's id and is not stored, delivered or counted again."
      valueOf={(form) => ({ [source]: textOf(form, source) })}
    >
      {(messages) => (
        <>
          <Select form={f} name="source" label="The key is" messages={messages} value={source} onChange={setSource} options={[{ value: 'header', label: 'A header' }, { value: 'json_field', label: 'A JSON body field' }]} />
          <Input key={source} form={f} name={source} label={source === 'header' ? 'Header name' : 'Field (dotted for a nested one)'} messages={messages}
            placeholder={source === 'header' ? 'X-GitHub-Delivery' : 'data.object.id'} value={(set && source in set) ? setValue : ''} />
        </>
      )}
    </SettingForm>
  );
}

function ResponseForm({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const set = endpoint.response;
  const f = `response-${endpoint.id}`;
  return (
    <SettingForm
      endpoint={endpoint} setting="response" title="Custom response" onSaved={onSaved}
      current={set ? `answers ${set.status}${Object.keys(set.headers).length ? ` with ${Object.keys(set.headers).length} header(s)` : ''}${set.body ? ' and a body' : ''}` : null}
      help={'What a stored request is answered with instead of {"id", "status"}. Refusals are answered as always.'}
      valueOf={(form) => {
        const status = integerOf(form, 'status');
        const headers = jsonOf(textOf(form, 'headers'), 'headers');
        if (headers !== null && (typeof headers !== 'object' || Array.isArray(headers))) throw new FieldProblem('headers', 'Give the headers as a JSON object: {"name": "value"}.');
        return { ...(status !== null ? { status } : {}), ...(headers !== null ? { headers } : {}), body: (form.elements.namedItem('body') as HTMLTextAreaElement).value };
      }}
    >
      {(messages) => (
        <>
          <Input form={f} name="status" label="Status (200–299; default 200)" messages={messages} inputMode="numeric" value={set ? String(set.status) : ''} />
          <div class="field">
            <label for={`${f}-headers`}>Headers (a JSON object; optional)</label>
            <textarea id={`${f}-headers`} name="headers" class="code" rows={2} spellcheck={false} placeholder={'{"x-handled-by": "hook"}'} defaultValue={set && Object.keys(set.headers).length ? JSON.stringify(set.headers) : ''} {...describedBy(messages, 'headers', `${f}-headers`)} />
            <p id={`${f}-headers-message`} class="error field-message" role="alert">{messages.headers}</p>
          </div>
          <div class="field">
            <label for={`${f}-body`}>Body</label>
            <textarea id={`${f}-body`} name="body" class="code" rows={3} spellcheck={false} placeholder={'{"ok":true,"received":"{{event_id}}"}'} defaultValue={set?.body ?? ''} {...describedBy(messages, 'body', `${f}-body`)} />
            <p id={`${f}-body-message`} class="error field-message" role="alert">{messages.body}</p>
          </div>
        </>
      )}
    </SettingForm>
  );
}

/** The four ingest settings of an endpoint. */
export function IngestSettings({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  return (
    <div class="ingest-settings">
      <VerificationForm endpoint={endpoint} onSaved={onSaved} />
      <HandshakeForm endpoint={endpoint} onSaved={onSaved} />
      <DedupeForm endpoint={endpoint} onSaved={onSaved} />
      <ResponseForm endpoint={endpoint} onSaved={onSaved} />
    </div>
  );
}
