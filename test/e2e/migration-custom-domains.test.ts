/**
 * Migration 017 (custom domain verification) on accounts as the code before it left them:
 * a custom domain set then stays in use (marked verified, so no endpoint URL changes on
 * upgrade), an account without one has no claim, and afterwards only verified domains are
 * unique: two pending claims of one name may coexist, two verified ones may not.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createOrm, type Orm } from '@hook/db';
import { adminQuery, withDatabase } from '@hook/db/testing';

const name = `hook_migration_domains_${process.pid}_${Date.now()}`;
let orm: Orm | undefined;

afterAll(async () => {
  await orm?.close();
  await adminQuery(inject('databaseServerUrl'), `drop database if exists ${name} with (force)`);
});

describe('migration 017-custom-domain-verification', () => {
  it('keeps existing custom domains in use and makes only verified ones unique', async () => {
    const serverUrl = inject('databaseServerUrl');
    await adminQuery(serverUrl, `create database ${name}`);
    orm = await createOrm({ databaseUrl: withDatabase(serverUrl, name), poolMax: 2 });
    await orm.migrator.up({ to: '016-trace-parent' });
    const sql = orm.em.getConnection();
    await sql.execute(`insert into account (id, plan, custom_domain, created_at) values ('acct_withdomain', 'pro', 'hooks.acme.test', now()), ('acct_without', 'pro', null, now()), ('acct_other', 'pro', null, now())`);

    expect((await orm.migrator.up({ to: '017-custom-domain-verification' })).map((migration) => migration.name)).toEqual(['017-custom-domain-verification']);
    const rows = await sql.execute(`select id, custom_domain, custom_domain_token is not null as has_token, custom_domain_verified_at is not null as verified from account order by id collate "C"`);
    expect(rows).toEqual([
      { id: 'acct_other', custom_domain: null, has_token: false, verified: false },
      { id: 'acct_withdomain', custom_domain: 'hooks.acme.test', has_token: true, verified: true },
      { id: 'acct_without', custom_domain: null, has_token: false, verified: false },
    ]);

    // A pending claim of the same name is allowed beside the verified one; a second verified one is not.
    await sql.execute(`update account set custom_domain = 'hooks.acme.test', custom_domain_token = 'abc' where id = 'acct_other'`);
    await expect(sql.execute(`update account set custom_domain_verified_at = now() where id = 'acct_other'`)).rejects.toThrow(/account_custom_domain_verified_idx/);
  });
});
