import { defineConfig } from 'vitest/config';

/**
 * expect.poll waits up to 10 s (vitest's default is 1 s): what a test waits on (a delivery, a
 * background pass) can take seconds on a loaded 2-core machine, and a poll ends as soon as it holds.
 */
const TIMEOUTS = { testTimeout: 30_000, hookTimeout: 60_000, expect: { poll: { timeout: 10_000 } } };

/**
 * The tests of lists, searches and exports, run a second time (project `parallel-plans`)
 * with PostgreSQL choosing parallel plans on every connection to each test database
 * (test/support/database.ts, forceParallelPlans), as it does by itself once tables are
 * large: a statement that cannot run in a parallel query fails here instead of answering
 * 500 at size (issue 29). `--project hook` runs each file once.
 */
const LIST_TESTS = [
  'packages/db/test/event-list.test.ts',
  'apps/relay/test/events.test.ts',
  'apps/relay/test/console-api.test.ts',
  'apps/relay/test/playground.test.ts',
  'apps/relay/test/notifications.test.ts',
  'test/e2e/cli-fixtures.test.ts',
  'test/e2e/cli-events-sparse.test.ts',
];

export default defineConfig({
  test: {
    // Once for both projects: one PostgreSQL server and template database.
    globalSetup: ['./test/support/global-setup.ts'],
    ...TIMEOUTS,
    projects: [
      { test: { name: 'hook', include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/e2e/**/*.test.ts'], ...TIMEOUTS } },
      { test: { name: 'parallel-plans', include: LIST_TESTS, provide: { parallelPlans: true }, ...TIMEOUTS } },
    ],
  },
});
