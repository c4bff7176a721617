/**
 * Test databases: one template migrated once per test run, and a fresh copy of it per
 * test file (CREATE DATABASE … TEMPLATE is a file copy, far faster than migrating).
 * SQL: a raw `pg` client, not the ORM's kysely; why, in ../README.md (How SQL is written here).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createOrm, migrateToLatest } from './orm.ts';

/** The URL of another database on the same server. */
export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs one statement on its own short-lived connection (CREATE/DROP/ALTER DATABASE cannot run in a pool's transaction). */
export async function adminQuery(serverUrl: string, sql: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** Creates and migrates a template database on the server; returns its name. */
export async function createTemplateDatabase(serverUrl: string): Promise<string> {
  const name = `hook_tpl_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const orm = await createOrm({ databaseUrl: withDatabase(serverUrl, name), poolMax: 1 });
  try {
    await migrateToLatest(orm);
  } finally {
    await orm.close();
  }
  return name;
}

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** Drops the database. Fails if anything still holds a connection to it: a leak to fix. */
  drop(): Promise<void>;
}

/** A fresh, migrated database copied from the template. */
export async function createTestDatabase(serverUrl: string, templateName: string): Promise<TestDatabase> {
  const name = `hook_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name} template ${templateName}`);
  return {
    name,
    url: withDatabase(serverUrl, name),
    async drop() {
      try {
        await adminQuery(serverUrl, `drop database ${name}`);
      } catch (error) {
        await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
        throw new Error(`test database ${name} still had open connections when the test file ended (a leaked ORM or pool): ${String(error)}`);
      }
    },
  };
}

/** Drops a database whatever holds it; for the end of a run. */
export async function dropDatabaseForce(serverUrl: string, name: string): Promise<void> {
  await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
}
