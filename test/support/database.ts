import { inject } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@hook/db/testing';

/** A fresh migrated database for one test file; drop it in afterAll (dropping fails if connections leaked). */
export async function freshDatabase(): Promise<TestDatabase> {
  return createTestDatabase(inject('databaseServerUrl'), inject('templateDatabase'));
}
