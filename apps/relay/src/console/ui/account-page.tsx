// The account page (#/account): plan and usage, the 30-day chart, members and API keys.
import { useEffect, useState } from 'preact/hooks';
import { call } from './api.ts';
import { UsageChart, type UsageDay } from './chart.tsx';

export function AccountPage() {
  const [account, setAccount] = useState<any>(null);
  const [days, setDays] = useState<UsageDay[] | null>(null);
  const [members, setMembers] = useState<any[]>([]);
  const [keys, setKeys] = useState<any[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    call('GET', '/v1/account').then(setAccount, (failure) => setError(failure.message));
    call('GET', '/v1/account/usage/daily?days=30').then((usage) => setDays(usage.days), (failure) => setError(failure.message));
    call('GET', '/v1/members?limit=100').then((page) => setMembers(page.data), () => {});
    call('GET', '/v1/api-keys?limit=100').then((page) => setKeys(page.data), () => {});
  }, []);
  const allowance = account?.limits?.events_per_month;
  const used = account?.usage?.events_accepted ?? 0;
  return (
    <main id="main">
      <h1>Account</h1>
      <p class="error" role="alert">{error}</p>
      {account && (
        <section aria-labelledby="plan-heading">
          <h2 id="plan-heading">Plan: <span id="plan">{account.account.plan}</span></h2>
          <p id="usage-line">{used.toLocaleString()} of {allowance === null ? 'unlimited' : allowance.toLocaleString()} events this month ({account.usage.month}){allowance ? `, ${Math.round((used / allowance) * 100)}% of the allowance` : ''}. The allowance resets {new Date(account.usage.resets_at).toLocaleDateString()}.</p>
          {allowance ? <progress id="usage-meter" max={allowance} value={used} aria-label="Events used this month">{used}</progress> : null}
        </section>
      )}
      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">Last 30 days</h2>
        {days ? <UsageChart days={days} /> : <p class="quiet">Loading usage…</p>}
      </section>
      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <div class="scroll"><table id="members"><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Since</th></tr></thead>
          <tbody>{members.map((member) => <tr key={member.id}><td>{member.email ?? '(no email)'}</td><td>{member.role}</td><td>{new Date(member.created_at).toLocaleDateString()}</td></tr>)}</tbody></table></div>
        <p class="quiet">Add one with <code>hook members add &lt;email&gt;</code>.</p>
      </section>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">API keys</h2>
        <div class="scroll"><table id="keys"><thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created</th></tr></thead>
          <tbody>{keys.map((key) => <tr key={key.id}><td>{key.name ?? '(no name)'}</td><td class="mono">{key.prefix}…</td><td>{new Date(key.created_at).toLocaleDateString()}</td></tr>)}</tbody></table></div>
        <p class="quiet">Revoking a key (<code>{'hook api-keys revoke <id>'}</code>) also ends the console sessions signed in with it.</p>
      </section>
    </main>
  );
}

