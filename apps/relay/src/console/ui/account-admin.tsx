// The account page's team sections: API keys (docs/api.md#api-keys), members
// (docs/api.md#members) and alert channels (docs/alerts.md). Anyone may look; changing
// someone else's key, the members or the alerts is for admins, and a member sees a
// sentence saying so instead of buttons the relay would refuse (403 admin_required).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { call, type AlertSettings, type ApiKey, type Member, type Page, type Session } from './api.ts';
import { copyText } from './clipboard.ts';
import { ConfirmButton } from './dialog.tsx';
import { describedBy, FieldProblem, messagesOf, textOf, useSubmit } from './forms.ts';

/** The signed-in member (GET /console/session): their id and role decide which buttons show. */
export function useSession(): Session | null {
  const [session, setSession] = useState<Session | null>(null);
  useEffect(() => { call<Session>('GET', '/console/session').then(setSession, () => {}); }, []);
  return session;
}

/** A secret shown once with a copy button, and a sentence that it will not be shown again. */
function ShownOnce({ label, value, id }: { label: string; value: string; id: string }) {
  const [note, setNote] = useState('');
  return (
    <div class="created shown-once" role="status">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input id={id} class="mono" type="text" readOnly value={value} />
        <button type="button" onClick={() => copyText(value, setNote)}>Copy</button>
      </div>
      <p class="quiet">{note} It is shown only now: copy it somewhere safe.</p>
    </div>
  );
}

const ADMIN_ONLY = 'Only an admin of this account can change this; ask one.';

export function ApiKeysSection({ session, members }: { session: Session | null; members: Member[] }) {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [error, setError] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const submit = useSubmit({ known: ['name'] });
  const load = useCallback(() => { call<Page<ApiKey>>('GET', '/v1/api-keys?limit=100').then((page) => setKeys(page.data), (failure) => setError(failure.message)); }, []);
  useEffect(load, [load]);
  const emails = new Map(members.map((member) => [member.id, member.email ?? '(no email)']));
  const create = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const form = submitEvent.currentTarget as HTMLFormElement;
    const name = textOf(form, 'name');
    await submit.run(async () => {
      const key = await call<ApiKey & { api_key: string }>('POST', '/v1/api-keys', name ? { name } : {});
      form.reset();
      setCreated(key.api_key);
      load();
    });
  };
  const isAdmin = session?.role === 'admin';
  return (
    <section aria-labelledby="keys-heading" class="admin-section">
      <h2 id="keys-heading">API keys</h2>
      <p class="error" role="alert">{error}</p>
      <div class="scroll">
        <table id="keys">
          <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Member</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>{keys.map((key) => {
            const mine = key.member_id === session?.member_id;
            const current = mine && session?.key_prefix === key.prefix;
            return (
              <tr key={key.id} data-key-id={key.id}>
                <td>{key.name ?? '(no name)'}</td>
                <td class="mono">{key.prefix}…{current ? <span class="badge info">this session</span> : null}</td>
                <td>{emails.get(key.member_id) ?? key.member_id}</td>
                <td>{new Date(key.created_at).toLocaleDateString()}</td>
                <td>{(mine || isAdmin) && (
                  <ConfirmButton label="Revoke…" class="revoke-key" title={`Revoke the key ${key.name ?? ''} (${key.prefix}…)?`} confirmLabel="Revoke key"
                    onConfirm={async () => { await call('DELETE', `/v1/api-keys/${key.id}`); current ? window.dispatchEvent(new CustomEvent('hook:signed-out')) : load(); }}>
                    <p>It stops working at once: scripts, CI jobs, <code>hook</code> sessions and console sessions signed in with it are refused from now on.</p>
                    {current && <p><strong>This console session is signed in with it: you will be signed out.</strong></p>}
                  </ConfirmButton>
                )}</td>
              </tr>
            );
          })}</tbody>
        </table>
      </div>
      <form id="new-key-form" class="inline-form" onSubmit={create} noValidate>
        <label for="new-key-name">New key's name (optional)</label>
        <input id="new-key-name" name="name" type="text" maxLength={200} placeholder="ci" {...describedBy(submit.messages, 'name', 'new-key-name')} />
        <button type="submit" class="primary" disabled={submit.busy}>Create key</button>
        <p id="new-key-name-message" class="error field-message" role="alert">{submit.messages.name ?? submit.messages['']}</p>
      </form>
      {created && <ShownOnce label="The new API key (it acts as you)" value={created} id="created-key" />}
      {!isAdmin && <p class="quiet">You can revoke your own keys; revoking another member's key is for an admin.</p>}
    </section>
  );
}

function RoleSelect({ member, onChanged }: { member: Member; onChanged: (member: Member) => void }) {
  const change = useSubmit();
  const id = `role-${member.id}`;
  return (
    <>
      <label for={id} class="visually-hidden">Role of {member.email ?? member.id}</label>
      <select id={id} class="member-role" disabled={change.busy} onChange={(event) => {
        const select = event.currentTarget as HTMLSelectElement;
        const role = select.value;
        change.run(async () => onChanged(await call<Member>('PATCH', `/v1/members/${member.id}`, { role }))).then((done) => { if (!done) select.value = member.role; });
      }}>
        <option value="member" selected={member.role === 'member'}>member</option>
        <option value="admin" selected={member.role === 'admin'}>admin</option>
      </select>
      <span class="error" role="alert">{change.messages['']}</span>
    </>
  );
}

export function MembersSection({ session, members, reload }: { session: Session | null; members: Member[]; reload: () => void }) {
  const [created, setCreated] = useState<{ email: string; key: string } | null>(null);
  const submit = useSubmit({ known: ['email', 'role'] });
  const isAdmin = session?.role === 'admin';
  const add = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const form = submitEvent.currentTarget as HTMLFormElement;
    const email = textOf(form, 'email');
    const role = textOf(form, 'role');
    await submit.run(async () => {
      if (!email) throw new FieldProblem('email', 'Enter the new member\'s email address.');
      const added = await call<{ member: Member; api_key: string }>('POST', '/v1/members', { email, role });
      form.reset();
      setCreated({ email, key: added.api_key });
      reload();
    });
  };
  return (
    <section aria-labelledby="members-heading" class="admin-section">
      <h2 id="members-heading">Members</h2>
      <div class="scroll">
        <table id="members">
          <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>{members.map((member) => (
            <tr key={member.id} data-member-id={member.id}>
              <td>{member.email ?? '(no email)'}{member.id === session?.member_id ? ' (you)' : ''}</td>
              <td>{isAdmin ? <RoleSelect member={member} onChanged={reload} /> : member.role}</td>
              <td>{new Date(member.created_at).toLocaleDateString()}</td>
              <td>{isAdmin && (
                <ConfirmButton label="Remove…" class="remove-member" title={`Remove ${member.email ?? member.id} from the account?`} confirmLabel="Remove member"
                  onConfirm={async () => { await call('DELETE', `/v1/members/${member.id}`); member.id === session?.member_id ? window.dispatchEvent(new CustomEvent('hook:signed-out')) : reload(); }}>
                  <p>Every API key of theirs stops working at once, console sessions included. Their endpoints and events stay: they belong to the account.</p>
                </ConfirmButton>
              )}</td>
            </tr>
          ))}</tbody>
        </table>
      </div>
      {isAdmin ? (
        <form id="new-member-form" class="inline-form" onSubmit={add} noValidate>
          <div class="field">
            <label for="new-member-email">Email</label>
            <input id="new-member-email" name="email" type="email" required placeholder="dev@example.com" {...describedBy(submit.messages, 'email', 'new-member-email')} />
            <p id="new-member-email-message" class="error field-message" role="alert">{submit.messages.email}</p>
          </div>
          <div class="field">
            <label for="new-member-role">Role</label>
            <select id="new-member-role" name="role"><option value="member">member</option><option value="admin">admin</option></select>
          </div>
          <button type="submit" class="primary" disabled={submit.busy}>Add member</button>
          <p class="error" role="alert">{submit.messages['']}</p>
        </form>
      ) : <p class="quiet">{ADMIN_ONLY}</p>}
      {created && <ShownOnce label={`${created.email}'s first API key: hand it to them`} value={created.key} id="created-member-key" />}
    </section>
  );
}

export function AlertsSection({ session }: { session: Session | null }) {
  const [settings, setSettings] = useState<AlertSettings | null>(null);
  const [unavailable, setUnavailable] = useState('');
  const submit = useSubmit({ known: ['slack_webhook_url', 'email_to'] });
  const test = useSubmit();
  const load = useCallback(() => {
    call<AlertSettings>('GET', '/v1/account/alerts').then(setSettings, (failure) => setUnavailable(messagesOf(failure)['']!));
  }, []);
  useEffect(load, [load]);
  const isAdmin = session?.role === 'admin';
  const save = async (submitEvent: Event) => {
    submitEvent.preventDefault();
    const form = submitEvent.currentTarget as HTMLFormElement;
    const slack = textOf(form, 'slack_webhook_url');
    const emails = textOf(form, 'email_to').split(/[\s,;]+/).filter(Boolean);
    await submit.run(async () => {
      const body: Record<string, unknown> = {};
      if (slack) body.slack_webhook_url = slack;
      if (settings?.email.available) body.email_to = emails;
      setSettings(await call<AlertSettings>('PUT', '/v1/account/alerts', body));
      (form.elements.namedItem('slack_webhook_url') as HTMLInputElement).value = '';
      return 'Saved.';
    });
  };
  const sendTest = () => test.run(async () => {
    const result = await call<{ queued: string[] }>('POST', '/v1/account/alerts/test', {});
    load();
    return result.queued.length ? `A test alert is on its way to ${result.queued.join(' and ')}; it appears below once sent.` : 'No channel is set: add a Slack URL or an email address first.';
  });
  return (
    <section aria-labelledby="alerts-heading" class="admin-section" id="alerts">
      <h2 id="alerts-heading">Alerts</h2>
      <p class="quiet">When an issue opens or reopens, or a destination or endpoint is disabled, the relay tells these channels (a flapping destination sends one alert, not a thousand).</p>
      {unavailable && <p class="error" role="alert">{unavailable}</p>}
      {settings && (
        <>
          <dl class="facts alert-channels">
            <dt>Slack</dt><dd id="alert-slack">{settings.slack ? <span class="mono">{settings.slack.url_hint}</span> : 'not set'}</dd>
            <dt>Email</dt><dd id="alert-email">{!settings.email.available ? 'this relay sends no email (its operator has not set up SMTP)' : settings.email.to.length ? settings.email.to.join(', ') : 'not set'}</dd>
          </dl>
          {isAdmin ? (
            <form id="alerts-form" onSubmit={save} noValidate>
              <div class="field">
                <label for="alerts-slack">Slack incoming-webhook URL{settings.slack ? ' (a new one replaces it; empty keeps it)' : ''}</label>
                <input id="alerts-slack" name="slack_webhook_url" type="password" autocomplete="off" placeholder="https://hooks.slack.com/services/…" {...describedBy(submit.messages, 'slack_webhook_url', 'alerts-slack')} />
                <p id="alerts-slack-message" class="error field-message" role="alert">{submit.messages.slack_webhook_url}</p>
              </div>
              <div class="field">
                <label for="alerts-email">Email recipients (separated by commas)</label>
                <input id="alerts-email" name="email_to" type="text" disabled={!settings.email.available} defaultValue={settings.email.to.join(', ')} placeholder="ops@example.com" {...describedBy(submit.messages, 'email_to', 'alerts-email')} />
                <p id="alerts-email-message" class="error field-message" role="alert">{submit.messages.email_to}</p>
              </div>
              <p class="error" role="alert">{submit.messages['']}</p>
              <div class="toolbar">
                <button type="submit" class="primary" disabled={submit.busy}>Save alert channels</button>
                <button type="button" id="send-test-alert" disabled={test.busy} onClick={sendTest}>Send test alert</button>
                {settings.slack && (
                  <ConfirmButton label="Stop Slack alerts…" class="remove-slack" title="Stop alerts to Slack?" confirmLabel="Stop Slack alerts"
                    onConfirm={async () => setSettings(await call<AlertSettings>('PUT', '/v1/account/alerts', { slack_webhook_url: null }))}>
                    <p>The Slack URL is forgotten; to start again, paste it again.</p>
                  </ConfirmButton>
                )}
                <span class="quiet" role="status" id="alerts-note">{submit.note || test.note}</span>
              </div>
              <p class="error" role="alert">{test.messages['']}</p>
            </form>
          ) : <p class="quiet">{ADMIN_ONLY}</p>}
          <h3>Recent alerts</h3>
          {settings.recent.length === 0 ? <p class="quiet">None yet.</p> : (
            <div class="scroll">
              <table id="recent-alerts">
                <thead><tr><th scope="col">When</th><th scope="col">Channel</th><th scope="col">Alert</th><th scope="col">Status</th></tr></thead>
                <tbody>{settings.recent.map((alert, index) => (
                  <tr key={index}>
                    <td><time dateTime={alert.created_at} title={alert.created_at}>{new Date(alert.created_at).toLocaleString()}</time></td>
                    <td>{alert.channel}</td>
                    <td class="mono">{alert.type}</td>
                    <td><span class={`badge ${alert.status === 'sent' ? 'ok' : alert.status === 'failed' ? 'error' : 'info'}`}>{alert.status}</span>{alert.last_error ? <span class="quiet"> {alert.last_error}</span> : null}</td>
                  </tr>
                ))}</tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}

/** The three sections together, sharing the session and the member list. */
export function AccountAdmin() {
  const session = useSession();
  const [members, setMembers] = useState<Member[]>([]);
  const reload = useCallback(() => { call<Page<Member>>('GET', '/v1/members?limit=100').then((page) => setMembers(page.data), () => {}); }, []);
  useEffect(reload, [reload]);
  return (
    <>
      <MembersSection session={session} members={members} reload={reload} />
      <ApiKeysSection session={session} members={members} />
      <AlertsSection session={session} />
    </>
  );
}
