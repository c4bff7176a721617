// The account page (#/account): plan and usage, the 30-day chart, then members, API keys
// and alert channels (account-admin.tsx).
import { useEffect, useState } from 'preact/hooks';
import { call } from './api.ts';
import { UsageChart, type UsageDay } from './chart.tsx';
import { AccountAdmin } from './account-admin.tsx';

export function AccountPage() {
  const [account, setAccount] = useState<any>(null);
  const [days, setDays] = useState<UsageDay[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    call('GET', '/v1/account').then(setAccount, (failure) => setError(failure.message));
    call('GET', '/v1/account/usage/daily?days=30').then((usage) => setDays(usage.days), (failure) => setError(failure.message));
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
      <AccountAdmin />
    </main>
  );
}

