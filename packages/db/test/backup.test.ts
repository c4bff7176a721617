/**
 * backupDatabase's table order (packages/db/src/backup.ts): a table comes after every
 * table its foreign keys reference, read from pg_constraint, so a restore loading in
 * archive order never meets a missing parent. The relay's own foreign keys are all
 * DEFERRABLE INITIALLY DEFERRED (checked at commit, whatever the order), so this test
 * adds tables with immediate ones, named so that name order would be wrong.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { adminQuery, type TestDatabase } from '../src/testing.ts';
import { backupDatabase } from '../src/index.ts';
import { freshDatabase } from '@hook/test/database';

let database: TestDatabase;
let workDir: string;

beforeAll(async () => {
  database = await freshDatabase();
  workDir = mkdtempSync(join(tmpdir(), 'hook-backup-order-'));
  await adminQuery(database.url, `
    create table zz_parent (id int primary key);
    create table mm_middle (id int primary key, parent_id int not null references zz_parent (id));
    create table aa_child (id int primary key, middle_id int not null references mm_middle (id), parent_id int references zz_parent (id), self_id int references aa_child (id));
    insert into zz_parent values (1);
    insert into mm_middle values (1, 1);
    insert into aa_child values (1, 1, 1, null), (2, 1, null, 1);`);
});
afterAll(async () => {
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

it('puts each table after the tables its foreign keys reference', async () => {
  const { header } = await backupDatabase(database.url, join(workDir, 'order.backup'));
  const names = header.tables.map((table) => table.name);
  expect(names).toEqual(expect.arrayContaining(['zz_parent', 'mm_middle', 'aa_child', 'account', 'api_key', 'member']));
  const before = (parent: string, child: string): boolean => names.indexOf(parent) < names.indexOf(child);
  expect(before('zz_parent', 'mm_middle')).toBe(true);
  expect(before('mm_middle', 'aa_child')).toBe(true);
  expect(before('account', 'api_key')).toBe(true);
  expect(before('member', 'api_key')).toBe(true);
  expect(before('api_key', 'console_session')).toBe(true);
  expect(header.tables.find((table) => table.name === 'aa_child')?.rows).toBe(2);
});
