/**
 * `hook members add|list|role|remove` with the real binary against a real relay: an
 * admin builds a team, a member's key works but is refused admin-only commands, the
 * plan's member allowance and the last admin hold, and removal revokes keys at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { api, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
const admin = new HookUser();
const teammate = new HookUser();
/** The teammate's environment: their key, given by `hook members add`. */
let teammateEnv: Record<string, string>;
let teammateId: string;

beforeAll(async () => {
  relay = await startTestRelay();
  await admin.json(['signup', '--api-url', relay.baseUrl, '--email', 'ada@example.com']);
});

afterAll(async () => {
  await relay?.close();
  admin.remove();
  teammate.remove();
});

describe('hook members', () => {
  it('add prints the member and their key once; the key works for the teammate', async () => {
    const created = await admin.json(['members', 'add', 'grace@example.com']);
    expect(created.member).toMatchObject({ id: expect.stringMatching(/^mem_/), email: 'grace@example.com', role: 'member' });
    expect(created.api_key).toMatch(/^hk_/);
    teammateId = created.member.id;
    teammateEnv = { HOOK_API_URL: relay.baseUrl, HOOK_API_KEY: created.api_key };

    const whoami = await teammate.run(['endpoints', 'create', 'team-endpoint', '--json'], { env: teammateEnv });
    expect(whoami.code).toBe(0);
    const listed = await teammate.json(['members', 'list'], { env: teammateEnv });
    expect(listed.data.map((member: any) => [member.email, member.role])).toEqual([['grace@example.com', 'member'], ['ada@example.com', 'admin']]);
    expect(listed.next_cursor).toBeNull();

    const text = await admin.run(['members', 'list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/ID\s+EMAIL\s+ROLE\s+ADDED/);
    expect(text.stdout).toMatch(new RegExp(`${teammateId}\\s+grace@example\\.com\\s+member`));

    const human = await admin.run(['members', 'add', 'alan@example.com']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Role:\s+member/);
    expect(human.stdout).toMatch(/hk_[A-Za-z0-9_-]{43}/);
    expect(human.stdout).toContain('shown only once');
  });

  it("refuses a member's admin-only commands with admin_required (exit 1)", async () => {
    for (const args of [['members', 'add', 'eve@example.com'], ['members', 'role', teammateId, 'admin'], ['account', 'plan', 'pro']]) {
      const refused = await teammate.run([...args, '--json'], { env: teammateEnv });
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stdout).toBe('');
      expect(JSON.parse(refused.stderr).code).toBe('admin_required');
    }
    expect((await admin.json(['account', 'get'])).account.plan).toBe('free');
  });

  it('stops at the plan allowance with plan_limit_reached, and a bad role is a usage error', async () => {
    const full = await admin.run(['members', 'add', 'fourth@example.com', '--role', 'admin']);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain('plan_limit_reached');
    expect(full.stderr).toMatch(/free plan allows 3 members/);
    expect(full.stderr).toContain('`hook members remove <member>`');
    expect(full.stderr).not.toMatch(/\/v1\b/);
    const usage = await admin.run(['members', 'role', teammateId, 'owner']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("The role 'owner' is invalid: it must be one of admin, member.");
  });

  it('role promotes and demotes, never the last admin; remove revokes the keys at once', async () => {
    const promoted = await admin.json(['members', 'role', teammateId, 'admin']);
    expect(promoted).toMatchObject({ id: teammateId, role: 'admin' });
    const adminId = (await admin.json(['members', 'list'])).data.find((member: any) => member.email === 'ada@example.com').id;
    // Now the teammate, an admin, may demote the first admin, who then is refused admin work.
    expect((await teammate.json(['members', 'role', adminId, 'member'], { env: teammateEnv })).role).toBe('member');
    const lastAdmin = await teammate.run(['members', 'role', teammateId, 'member', '--json'], { env: teammateEnv });
    expect(lastAdmin.code).toBe(1);
    expect(JSON.parse(lastAdmin.stderr).code).toBe('last_admin');
    expect((await teammate.json(['members', 'role', adminId, 'admin'], { env: teammateEnv })).role).toBe('admin');

    const removed = await admin.run(['members', 'remove', teammateId]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`Removed member ${teammateId}`);
    const after = await teammate.run(['members', 'list', '--json'], { env: teammateEnv });
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stderr).code).toBe('invalid_api_key');
    expect((await api(relay.baseUrl, 'GET', `/v1/members/${teammateId}`, { key: teammateEnv.HOOK_API_KEY! })).status).toBe(401);

    const missing = await admin.run(['members', 'remove', teammateId, '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr).code).toBe('member_not_found');
    const self = await admin.run(['members', 'remove', adminId, '--json']);
    expect(self.code).toBe(1);
    expect(JSON.parse(self.stderr).code).toBe('last_admin');
  });
});
