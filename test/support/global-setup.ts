/**
 * Once per test run: a PostgreSQL server (HOOK_TEST_DATABASE_URL, else an embedded one
 * in a temporary directory) and a template database migrated once. Each test file
 * copies the template (see database.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@hook/db';
import { createTemplateDatabase, dropDatabaseForce } from '@hook/db/testing';
import './database.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let embedded: EmbeddedPostgres | undefined;
  let dataDir: string | undefined;
  let serverUrl = process.env.HOOK_TEST_DATABASE_URL;
  if (!serverUrl) {
    dataDir = mkdtempSync(join(tmpdir(), 'hook-test-pg-'));
    embedded = await startEmbeddedPostgres({ dataDir, database: 'postgres' });
    serverUrl = embedded.url;
  }
  const template = await createTemplateDatabase(serverUrl);
  project.provide('databaseServerUrl', serverUrl);
  project.provide('templateDatabase', template);
  return async () => {
    await dropDatabaseForce(serverUrl, template);
    await embedded?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
}
