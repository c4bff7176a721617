import { inject } from 'vitest';
import pg from 'pg';
import { adminQuery, createTestDatabase, type TestDatabase } from '@hook/db/testing';

/** What global-setup.ts provides to every test file. */
declare module 'vitest' {
  export interface ProvidedContext {
    databaseServerUrl: string;
    templateDatabase: string;
    /** Test databases choose parallel plans (forceParallelPlans): the `parallel-plans` project of vitest.config.ts. */
    parallelPlans?: boolean;
  }
}

/**
 * A fresh migrated database for one test file; drop it in afterAll (dropping fails if
 * connections leaked). In the `parallel-plans` project it chooses parallel plans.
 */
export async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase(inject('databaseServerUrl'), inject('templateDatabase'));
  if (inject('parallelPlans')) await forceParallelPlans(database);
  return database;
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

/**
 * What makes PostgreSQL run a query in parallel workers wherever it can, as it does by
 * itself once tables are large (a payload search at 2 M events, issue 29): each plan that
 * can run in parallel gets a Gather (`regress`: as `on`, but EXPLAIN does not show the
 * Gather it adds and errors do not name the worker), and parallel scans cost nothing to
 * start, so a query whose top cannot run in a worker still gets one below it. Something
 * that cannot run during a parallel query then fails the test as it would fail the request
 * at size. `debug_parallel_query` was `force_parallel_mode` before PostgreSQL 16.
 *
 * What fails depends on the server: up to PostgreSQL 16 a function with an exception
 * block (a subtransaction) fails in any parallel query, the leader included (hook_body_text
 * before migration 018: "cannot start subtransactions during a parallel operation");
 * PostgreSQL 17 allows such subtransactions, so only a run on a 16 or older server
 * (HOOK_TEST_DATABASE_URL) catches that one.
 */
function parallelPlanSettings(serverVersion: number): Record<string, string> {
  return {
    [serverVersion >= 160000 ? 'debug_parallel_query' : 'force_parallel_mode']: 'regress',
    parallel_setup_cost: '0',
    parallel_tuple_cost: '0',
    min_parallel_table_scan_size: '0',
    min_parallel_index_scan_size: '0',
  };
}

/**
 * Makes every connection opened to the database from now on choose parallel plans
 * (parallelPlanSettings): the relay's pools and LISTEN connections alike, whatever opens
 * them. Call it before the first connection.
 */
export async function forceParallelPlans(database: TestDatabase): Promise<void> {
  const serverUrl = inject('databaseServerUrl');
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows: [server] } = await client.query<{ version: number }>(`select current_setting('server_version_num')::int as version`);
    for (const [name, value] of Object.entries(parallelPlanSettings(server!.version))) {
      await client.query(`alter database "${database.name}" set ${name} = '${value}'`);
    }
  } finally {
    await client.end();
  }
}
