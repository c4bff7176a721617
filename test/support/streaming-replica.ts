/**
 * A PostgreSQL primary and a real streaming replica of it, both from the embedded
 * binaries the tests already use (packages/db/src/embedded-postgres.ts): the primary is
 * made and prepared (e.g. migrated), stopped cleanly, its cluster copied, and the copy
 * started as a hot standby (`standby.signal`, `primary_conninfo` in
 * postgresql.auto.conf) that streams from the primary through a replication slot.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, copyFileSync, cpSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseLsn, startEmbeddedPostgres, type EmbeddedPostgres } from '@hook/db';
import { adminQuery } from '@hook/db/testing';

const REPLICATION_ROLE = 'hook_replicator';
const SLOT = 'hook_test_replica';

export interface StreamingReplicaPair {
  /** The primary's `hook` database. */
  primaryUrl: string;
  /** The replica's `hook` database (read-only: a hot standby). */
  replicaUrl: string;
  /** Holds the replica's replay of WAL (it still receives it): what the primary writes from now on is missing there until resumeReplay. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Whether the replica has replayed everything the primary has written so far. */
  caughtUp(): Promise<boolean>;
  /** Stops the replica's server (fast shutdown); the primary keeps running. */
  stopReplica(): Promise<void>;
  /** Stops both servers and removes their files. */
  close(): Promise<void>;
}

/** Gives everything under `dir` to the owner of `like` (the OS user the server runs as when the tests run as root). */
function chownTree(dir: string, like: string): void {
  const { uid, gid } = statSync(like);
  lchownSync(dir, uid, gid);
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) lchownSync(join(entry.parentPath, entry.name), uid, gid);
}

/** Starts a primary, lets `prepare` fill its `hook` database, and starts a streaming replica of it. */
export async function startStreamingReplica({ prepare }: { prepare?: (primaryUrl: string) => Promise<void> } = {}): Promise<StreamingReplicaPair> {
  const root = mkdtempSync(join(tmpdir(), 'hook-replica-'));
  // Reachable by the OS user `postgres` when the tests run as root, so both clusters live in place.
  chmodSync(root, 0o755);
  const primaryDir = join(root, 'primary');
  const replicaDir = join(root, 'replica');
  const servers: EmbeddedPostgres[] = [];
  try {
    const first = await startEmbeddedPostgres({ dataDir: primaryDir });
    servers.push(first);
    if (first.clusterDir !== join(primaryDir, 'postgres')) throw new Error(`the primary's cluster is not in its data dir (${first.clusterDir}): the copy below expects it there`);
    const password = randomBytes(12).toString('hex');
    // initdb's pg_hba.conf already lets replication connections in from 127.0.0.1 (scram-sha-256), and wal_level is replica by default.
    await adminQuery(first.urlFor('postgres'), `create role ${REPLICATION_ROLE} with replication login password '${password}'`);
    await adminQuery(first.urlFor('postgres'), `select pg_create_physical_replication_slot('${SLOT}')`);
    await prepare?.(first.url);
    await first.stop();
    servers.pop();

    mkdirSync(replicaDir, { mode: 0o755 });
    const replicaCluster = join(replicaDir, 'postgres');
    cpSync(first.clusterDir, replicaCluster, { recursive: true });
    rmSync(join(replicaCluster, 'postmaster.pid'), { force: true });
    copyFileSync(join(primaryDir, 'postgres-password'), join(replicaDir, 'postgres-password'));
    writeFileSync(join(replicaCluster, 'standby.signal'), '');
    appendFileSync(join(replicaCluster, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${first.port} user=${REPLICATION_ROLE} password=${password} application_name=${SLOT}'\n` +
      `primary_slot_name = '${SLOT}'\n`);
    chmodSync(replicaCluster, 0o700); // PostgreSQL refuses a data directory others may enter
    chownTree(replicaCluster, first.clusterDir);

    const primary = await startEmbeddedPostgres({ dataDir: primaryDir, port: first.port });
    servers.push(primary);
    const replica = await startEmbeddedPostgres({ dataDir: replicaDir });
    servers.push(replica);
    const replicaAdmin = replica.urlFor('postgres');
    return {
      primaryUrl: primary.url,
      replicaUrl: replica.url,
      pauseReplay: () => adminQuery(replicaAdmin, 'select pg_wal_replay_pause()'),
      resumeReplay: () => adminQuery(replicaAdmin, 'select pg_wal_replay_resume()'),
      async caughtUp() {
        const read = async (url: string, sql: string): Promise<string> => {
          const client = new pg.Client({ connectionString: url });
          await client.connect();
          try {
            return (await client.query<{ lsn: string }>(sql)).rows[0]!.lsn;
          } finally {
            await client.end();
          }
        };
        const written = await read(primary.urlFor('postgres'), 'select pg_current_wal_lsn()::text as lsn');
        const replayed = await read(replicaAdmin, 'select pg_last_wal_replay_lsn()::text as lsn');
        return parseLsn(replayed) >= parseLsn(written);
      },
      stopReplica: () => replica.stop(),
      async close() {
        await replica.stop();
        await primary.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await Promise.all(servers.map((server) => server.stop()));
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
