/**
 * `hook api-keys create|list|revoke` and `hook account delete` with the real binary against
 * a real relay: a key is printed once and works, the list shows prefixes only, revocation
 * stops a key at once, and deleting the account needs its own id, erases it and forgets
 * the profile. Errors go to stderr with truthful exit codes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HookUser, signedUpUser } from '../support/cli.ts';
import { api, sendEvent, sqlRows } from '../support/relay.ts';

const setup = signedUpUser();

describe('hook api-keys', () => {
  it('create prints the new key once; it works; list shows its prefix only', async () => {
    const created = await setup.user.json(['api-keys', 'create', '--name', 'ci']);
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/), name: 'ci', prefix: created.api_key.slice(0, 11), member_id: expect.stringMatching(/^mem_/),
      created_at: expect.stringMatching(/Z$/), api_key: expect.stringMatching(/^hk_[A-Za-z0-9_-]{43}$/),
    });
    expect((await api(setup.relay.baseUrl, 'GET', '/v1/account', { key: created.api_key })).status).toBe(200);

    const listed = await setup.user.json(['api-keys', 'list']);
    expect(listed.data.map((key: { id: string }) => key.id)).toContain(created.id);
    expect(listed.data[0]).toEqual({ id: created.id, name: 'ci', prefix: created.prefix, member_id: created.member_id, created_at: created.created_at });
    expect(JSON.stringify(listed)).not.toContain(created.api_key);
    expect(listed.next_cursor).toBeNull();

    const text = await setup.user.run(['api-keys', 'list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/ID\s+NAME\s+PREFIX\s+MEMBER\s+CREATED/);
    expect(text.stdout).toMatch(new RegExp(`${created.id}\\s+ci\\s+${created.prefix}`));
    expect(text.stdout).not.toContain(created.api_key);

    const human = await setup.user.run(['api-keys', 'create', '--name', 'laptop']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('shown only once');
    expect(human.stdout).toMatch(/hk_[A-Za-z0-9_-]{43}/);
    expect(human.stderr).toContain('hook api-keys revoke key_');
  });

  it('revoke stops a key at once; an unknown id and the last admin key are refused on stderr (exit 1)', async () => {
    const created = await setup.user.json(['api-keys', 'create', '--name', 'short-lived']);
    expect(await setup.user.json(['api-keys', 'revoke', created.id])).toEqual({ id: created.id, revoked: true });
    expect((await api(setup.relay.baseUrl, 'GET', '/v1/account', { key: created.api_key })).status).toBe(401);

    const unknown = await setup.user.run(['api-keys', 'revoke', created.id, '--json']);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    const problem = JSON.parse(unknown.stderr);
    expect(problem.code).toBe('api_key_not_found');
    expect(problem.fix).toContain('hook api-keys list');

    // A fresh user with only one key: it cannot revoke it.
    const loner = new HookUser();
    try {
      await loner.json(['signup', '--api-url', setup.relay.baseUrl]);
      const [only] = (await loner.json(['api-keys', 'list'])).data;
      const last = await loner.run(['api-keys', 'revoke', only.id]);
      expect(last.code).toBe(1);
      expect(last.stdout).toBe('');
      expect(last.stderr).toContain('last_api_key');
      expect(last.stderr).toContain('hook api-keys create');
      expect((await loner.json(['account', 'get'])).account.id).toMatch(/^acct_/);
    } finally {
      loner.remove();
    }

    const usage = await setup.user.run(['api-keys', 'revoke']);
    expect(usage.code).toBe(2);
  });
});

describe('hook account delete', () => {
  it('needs --confirm with the account id, erases the account and forgets the profile', async () => {
    const user = new HookUser();
    try {
      const signup = await user.json(['signup', '--api-url', setup.relay.baseUrl]);
      const accountId: string = signup.account.id;
      const endpoint = await user.json(['endpoints', 'create', 'doomed']);
      await sendEvent(endpoint.url, '{"n":1}');

      // No --confirm: exit 2, nothing erased, and the error names the command with this account's id.
      const unconfirmed = await user.run(['account', 'delete', '--json']);
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stdout).toBe('');
      expect(JSON.parse(unconfirmed.stderr).fix).toContain(`hook account delete --confirm ${accountId}`);
      // Another id: the relay refuses (exit 1), the fix names the right command.
      const wrong = await user.run(['account', 'delete', '--confirm', 'acct_00000000000000000000000000', '--json']);
      expect(wrong.code).toBe(1);
      const problem = JSON.parse(wrong.stderr);
      expect(problem.code).toBe('confirmation_required');
      expect(problem.fix).toContain(`hook account delete --confirm ${accountId}`);
      expect((await user.json(['account', 'get'])).account.id).toBe(accountId);

      const deleted = await user.json(['account', 'delete', '--confirm', accountId]);
      expect(deleted).toEqual({ id: accountId, deleted: true, erased: { endpoints: 1, destinations: 1, events: 1, api_keys: 1, members: 1 } });
      expect(await sqlRows(setup.relay, 'select id from account where id = ?', [accountId])).toEqual([]);
      expect(await sqlRows(setup.relay, 'select id from event where account_id = ?', [accountId])).toEqual([]);
      expect((await fetch(endpoint.url, { method: 'POST', body: '{}' })).status).toBe(404);
      // The profile held the erased account's key: it is gone, so the next command says how to start again.
      expect(existsSync(user.configPath) ? JSON.parse(readFileSync(user.configPath, 'utf8')).profiles?.default : undefined).toBeUndefined();
      const after = await user.run(['account', 'get', '--json']);
      expect(after.code).toBe(1);
      expect(JSON.parse(after.stderr).code).toBe('not_logged_in');
    } finally {
      user.remove();
    }
    // The file's own user is untouched.
    expect((await setup.user.json(['account', 'get'])).account.id).toMatch(/^acct_/);
  });
});
