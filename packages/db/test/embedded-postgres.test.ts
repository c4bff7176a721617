import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../src/index.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'hook-embedded-test-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function query(url: string, sql: string): Promise<any[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startEmbeddedPostgres', () => {
  it('runs on its own port with a password, keeps data across restarts, and stops', async () => {
    const first = await startEmbeddedPostgres({ dataDir, database: 'kept' });
    expect(first.port).not.toBe(5432);
    expect(first.url).toContain('/kept');
    expect(statSync(join(dataDir, 'postgres-password')).mode & 0o077).toBe(0);
    await query(first.url, 'create table notes (body text); insert into notes values (\'survives\')');
    const withoutPassword = first.url.replace(/:[^:@/]+@/, '@');
    await expect(query(withoutPassword, 'select 1')).rejects.toThrow(/password/);
    const [{ pid }] = await query(first.url, 'select pg_backend_pid() as pid');
    expect(pid).toBeGreaterThan(0);
    await first.stop();
    await expect(query(first.url, 'select 1')).rejects.toThrow();

    const second = await startEmbeddedPostgres({ dataDir, database: 'kept' });
    try {
      expect(await query(second.url, 'select body from notes')).toEqual([{ body: 'survives' }]);
    } finally {
      await second.stop();
    }
  });

  it('refuses a data directory that another live relay is using, and leaves its server alone', async () => {
    const running = await startEmbeddedPostgres({ dataDir, database: 'kept' });
    const otherRelay = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => otherRelay.once('spawn', resolve));
      writeFileSync(join(dataDir, 'owner.pid'), String(otherRelay.pid));
      await expect(startEmbeddedPostgres({ dataDir, database: 'kept' })).rejects.toThrow(`Another relay (pid ${otherRelay.pid}) is using`);
      expect(await query(running.url, 'select body from notes')).toEqual([{ body: 'survives' }]);
    } finally {
      otherRelay.kill('SIGKILL');
      await running.stop();
    }
  });

  it('stops a stale server that a killed owner left behind, then starts', async () => {
    const orphan = await startEmbeddedPostgres({ dataDir, database: 'kept' });
    const [{ pid: backendPid }] = await query(orphan.url, 'select pg_backend_pid() as pid');
    expect(backendPid).toBeGreaterThan(0);
    const postmasterPid = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(isRunning(postmasterPid)).toBe(true);
    // Not stopping `orphan`: as if its owner had been killed.
    const messages: string[] = [];
    const next = await startEmbeddedPostgres({ dataDir, database: 'kept', log: (message) => messages.push(message) });
    try {
      expect(messages.some((message) => message.includes(`stale embedded PostgreSQL (pid ${postmasterPid})`))).toBe(true);
      expect(isRunning(postmasterPid)).toBe(false);
      expect(await query(next.url, 'select body from notes')).toEqual([{ body: 'survives' }]);
    } finally {
      await next.stop();
    }
  });
});
