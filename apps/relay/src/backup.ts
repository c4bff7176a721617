/**
 * `npm run backup -- <file>` and `npm run restore -- <file>` (through scripts/backup.mjs,
 * which checks the Node version first): the relay's database to one archive file and
 * back, with nothing but Node (docs/deployment.md#backup-and-restore). The database is
 * HOOK_DATABASE_URL, or, when that is unset, the embedded PostgreSQL under HOOK_DATA_DIR,
 * as `npm start` uses it: the running relay's server if there is one, else started here
 * for the command and stopped after.
 *
 * Exit codes: 0 done, 1 failed (the message says why and what to do), 2 usage.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseSecretKey, secretKeyId } from '@hook/core';
import { backupDatabase, BackupError, hasEmbeddedCluster, restoreDatabase, runningEmbeddedPostgres, startEmbeddedPostgres, type BackupHeader, type EmbeddedPostgres } from '@hook/db';
import { SECRET_KEY_FILE } from './secret-key-file.ts';

type Command = 'backup' | 'restore';

const USAGE = `Usage:
  npm run backup -- <file>     write the relay's database to <file> (the relay may keep running)
  npm run restore -- <file>    load <file> into an empty database (no relay running on it)

The database is HOOK_DATABASE_URL, or the embedded one in HOOK_DATA_DIR (default .hook) when
HOOK_DATABASE_URL is unset. HOOK_SECRET_KEY is not in the archive: keep it apart, and start
the restored relay with the same key. See docs/deployment.md#backup-and-restore.`;

/** One environment read, at the edge. */
interface Environment {
  /** HOOK_DATABASE_URL: the relay's PostgreSQL; unset means the embedded one. */
  databaseUrl?: string;
  /** HOOK_DATA_DIR: the embedded PostgreSQL's directory, relative to the clone (npm's working directory). Default `.hook`. */
  dataDir: string;
  /** HOOK_SECRET_KEY, as given (checked only to say whether it opens the archive's secrets). */
  secretKey?: string;
  /** Where the operator ran npm from (npm's INIT_CWD): a relative archive path means a file there. */
  invokedFrom: string;
}

function readEnvironment(env: NodeJS.ProcessEnv): Environment {
  const value = (name: string): string | undefined => (env[name]?.trim() ? env[name]!.trim() : undefined);
  return { databaseUrl: value('HOOK_DATABASE_URL'), dataDir: resolve(value('HOOK_DATA_DIR') ?? '.hook'), secretKey: value('HOOK_SECRET_KEY'), invokedFrom: env.INIT_CWD ?? process.cwd() };
}

class UsageError extends Error {}

interface Database {
  url: string;
  /** Says which database, for the summary. */
  label: string;
  /** The embedded server this command started (stopped when done). */
  embedded?: EmbeddedPostgres;
}

async function openDatabase(command: Command, env: Environment, log: (line: string) => void): Promise<Database> {
  if (env.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(env.databaseUrl)) throw new UsageError('HOOK_DATABASE_URL must be a postgres:// URL, such as postgres://hook:secret@db.internal:5432/hook.');
    return { url: env.databaseUrl, label: 'HOOK_DATABASE_URL' };
  }
  const running = runningEmbeddedPostgres(env.dataDir);
  if (command === 'backup') {
    if (!hasEmbeddedCluster(env.dataDir)) {
      throw new BackupError(
        `HOOK_DATABASE_URL is unset and ${env.dataDir} holds no embedded database: nothing to back up. ` +
          'Run this in the clone where the relay runs (npm start keeps its database in HOOK_DATA_DIR, default .hook), or set HOOK_DATABASE_URL.',
      );
    }
    if (running) return { url: running.urlFor('hook'), label: `the embedded PostgreSQL in ${env.dataDir} (running)` };
  } else if (running) {
    throw new BackupError(`a relay is running on the embedded database in ${env.dataDir}. Stop it (Ctrl-C or SIGTERM), or restore into a new HOOK_DATA_DIR, then run the restore again.`);
  }
  const embedded = await startEmbeddedPostgres({ dataDir: env.dataDir, log });
  return { url: embedded.url, label: `the embedded PostgreSQL in ${env.dataDir}`, embedded };
}

function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

function rowCount(header: BackupHeader): number {
  return header.tables.reduce((sum, table) => sum + table.rows, 0);
}

/** The key a relay started here would use: HOOK_SECRET_KEY, else (embedded) the data dir's key file. */
function availableKey(env: Environment): { id: string; source: string } | { error: string; source: string } | undefined {
  let text: string | undefined;
  let source: string;
  if (env.secretKey) {
    text = env.secretKey;
    source = 'HOOK_SECRET_KEY';
  } else if (!env.databaseUrl && existsSync(join(env.dataDir, SECRET_KEY_FILE))) {
    source = join(env.dataDir, SECRET_KEY_FILE);
    text = readFileSync(source, 'utf8');
  } else {
    return undefined;
  }
  try {
    return { id: secretKeyId(parseSecretKey(text)), source };
  } catch (error) {
    return { error: (error as Error).message, source };
  }
}

/** What to do about HOOK_SECRET_KEY after a restore; the restore itself has succeeded either way. */
function keyAdvice(header: BackupHeader, env: Environment, say: (line: string) => void, warn: (line: string) => void): void {
  const ids = header.secret_key_ids ?? [];
  if (ids.length === 0) return;
  const needed = `key id ${ids.join(', ')}`;
  const key = availableKey(env);
  if (key && 'id' in key && ids.includes(key.id)) {
    say(`The signing secrets are encrypted under ${needed}; ${key.source} is that key.`);
  } else if (key && 'id' in key) {
    warn(`the signing secrets are encrypted under ${needed}, but ${key.source} is key id ${key.id}: a relay with it refuses to start. Use the HOOK_SECRET_KEY of the relay that was backed up.`);
  } else if (key) {
    warn(`${key.source} is not a usable key (${key.error}); the signing secrets need ${needed}, the HOOK_SECRET_KEY of the relay that was backed up.`);
  } else if (env.databaseUrl) {
    say(`Start the relays on it with the HOOK_SECRET_KEY of the relay that was backed up (${needed}).`);
  } else {
    warn(
      `the signing secrets are encrypted under ${needed}: before npm start, copy the backed-up relay's key to ${join(env.dataDir, SECRET_KEY_FILE)} ` +
        '(its HOOK_DATA_DIR/secret.key) or set HOOK_SECRET_KEY; a relay that generates a new key refuses to start.',
    );
  }
}

async function runBackupCommand(command: Command, args: string[], processEnv: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number> {
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const warn = (line: string): void => void process.stderr.write(`hook ${command}: ${line}\n`);
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    say(USAGE);
    return 0;
  }
  const env = readEnvironment(processEnv);
  let database: Database | undefined;
  try {
    if (args.length !== 1 || args[0]!.startsWith('-')) {
      throw new UsageError(args.length === 0 ? 'give the archive file, e.g. npm run backup -- hook.backup' : `expected one archive file, got: ${args.join(' ')}`);
    }
    const file = resolve(env.invokedFrom, args[0]!);
    database = await openDatabase(command, env, (line) => warn(line));
    if (command === 'backup') {
      const { header, bytes } = await backupDatabase(database.url, file, { signal });
      say(`Backed up ${header.tables.length} tables, ${rowCount(header)} rows (${formatBytes(bytes)}), at migration ${header.migrations.at(-1)}, from ${database.label} to ${file}`);
      if (header.secret_key_ids.length > 0) {
        say(`Its signing secrets are encrypted under HOOK_SECRET_KEY key id ${header.secret_key_ids.join(', ')}, which is not in the archive: keep that key apart, and give it to the restored relay.`);
      }
    } else {
      const { header, migrated } = await restoreDatabase(database.url, file, { signal });
      say(`Restored ${header.tables.length} tables, ${rowCount(header)} rows, backed up ${header.created_at} at migration ${header.migrations.at(-1)}, into ${database.label}${migrated.length > 0 ? ` (ran migrations ${migrated[0]} to ${migrated.at(-1)})` : ''}`);
      keyAdvice(header, env, say, warn);
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      warn(error.message);
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    if (error instanceof BackupError) {
      warn(error.message);
      return 1;
    }
    warn(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  } finally {
    await database?.embedded?.stop();
  }
}

const [command, ...args] = process.argv.slice(2);
if (command === 'backup' || command === 'restore') {
  const controller = new AbortController();
  for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => controller.abort());
  process.exitCode = await runBackupCommand(command, args, process.env, controller.signal);
} else {
  process.stderr.write(`hook: unknown command '${command ?? ''}'; run it as npm run backup -- <file> or npm run restore -- <file>\n`);
  process.exitCode = 2;
}
