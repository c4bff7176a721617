/**
 * `hook account get`, `hook account plan` and `hook signup --email` against a real
 * relay: plan changes are made and recorded, the same document in --json and readable
 * text otherwise, and bad plans or emails fail with the right exit code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { api, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
const user = new HookUser();
let key: string;

beforeAll(async () => {
  relay = await startTestRelay();
  const signup = await user.json(['signup', '--api-url', relay.baseUrl, '--email', 'ada@example.com']);
  key = signup.api_key;
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

describe('hook account', () => {
  it('signup --email stores the address, and account get shows it with the free limits and no history', async () => {
    const details = await user.json(['account', 'get']);
    expect(details.account).toMatchObject({ plan: 'free', email: 'ada@example.com' });
    expect(details.limits).toMatchObject({ events_per_month: 10_000, endpoints: 3, retention_days: 7, members: 3 });
    expect(details.usage).toMatchObject({ events_accepted: 0, events_remaining: 10_000, endpoints: 0, members: 1 });
    expect(details.plan_history).toEqual([]);

    const text = await user.run(['account', 'get']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Plan:\s+free/);
    expect(text.stdout).toMatch(/Email:\s+ada@example\.com/);
    expect(text.stdout).toMatch(/Events per month:\s+10,000 events/);
    expect(text.stdout).toContain('No plan changes yet.');
  });

  it('account plan changes the plan at once and the relay records it', async () => {
    const changed = await user.json(['account', 'plan', 'pro']);
    expect(changed.account.plan).toBe('pro');
    expect(changed.limits).toMatchObject({ events_per_month: 2_000_000, endpoints: null, retention_days: 90, members: 25 });
    expect(changed.plan_history).toEqual([expect.objectContaining({ from_plan: 'free', to_plan: 'pro' })]);

    // The relay itself, not just the CLI's answer, has the new plan and history.
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key });
    expect(me.body.account.plan).toBe('pro');
    expect(me.body.plan_history).toEqual(changed.plan_history);

    const text = await user.run(['account', 'plan', 'enterprise']);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain('Changed the plan from pro to enterprise.');
    expect(text.stdout).toMatch(/Plan:\s+enterprise/);
    expect(text.stdout).toMatch(/Retention:\s+365 days/);
    expect(text.stdout).toMatch(/pro\s+enterprise/);
    expect(text.stdout).toMatch(/free\s+pro/);

    const history = (await user.json(['account', 'get'])).plan_history.map((change: any) => change.to_plan);
    expect(history).toEqual(['enterprise', 'pro']);
  });

  it('the current plan changes nothing and says so', async () => {
    const text = await user.run(['account', 'plan', 'enterprise']);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain('Already on enterprise; nothing changed.');
    expect((await user.json(['account', 'get'])).plan_history).toHaveLength(2);
  });

  it('an unknown plan is a usage error (exit 2) and changes nothing', async () => {
    const text = await user.run(['account', 'plan', 'platinum']);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain("The plan 'platinum' is invalid: it must be one of free, pro, enterprise.");
    const json = await user.run(['account', 'plan', 'platinum', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr).code).toBe('usage_error');
    expect((await user.json(['account', 'get'])).account.plan).toBe('enterprise');
  });

  it('signup with an address that is not one fails with validation_failed (exit 1)', async () => {
    const other = new HookUser();
    try {
      const result = await other.run(['signup', '--api-url', relay.baseUrl, '--email', 'not-an-email', '--json']);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr)).toMatchObject({ code: 'validation_failed' });
    } finally {
      other.remove();
    }
  });
});
