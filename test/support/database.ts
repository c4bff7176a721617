import { inject } from 'vitest';
import { adminQuery, createTestDatabase, type TestDatabase } from '@hook/db/testing';

/** What global-setup.ts provides to every test file. */
declare module 'vitest' {
  export interface ProvidedContext {
    databaseServerUrl: string;
    templateDatabase: string;
  }
}

/** A fresh migrated database for one test file; drop it in afterAll (dropping fails if connections leaked). */
export async function freshDatabase(): Promise<TestDatabase> {
  return createTestDatabase(inject('databaseServerUrl'), inject('templateDatabase'));
}

/**
 * Cuts a database off (refuses new connections and ends the open ones, as a PostgreSQL
 * restart or network loss would) or lets connections in again.
 */
export async function setDatabaseReachable(name: string, reachable: boolean): Promise<void> {
  const serverUrl = inject('databaseServerUrl');
  await adminQuery(serverUrl, `alter database "${name}" allow_connections ${reachable}`);
  if (!reachable) await adminQuery(serverUrl, 'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
}
