/**
 * Backup and restore of the relay's database with nothing but Node and the `pg` driver:
 * no pg_dump, pg_restore or psql, which the embedded PostgreSQL's npm package does not
 * ship (docs/deployment.md#backup-and-restore).
 *
 * An archive is one file:
 *
 *   hook-backup 1\n                      the format and its version
 *   {header JSON}\n                      migrations, tables with columns and row counts, sequences
 *   per table, in header order:          its `COPY … (FORMAT binary)` stream, cut into frames:
 *     u32be length, bytes …  u32be 0      one frame per ≤ FRAME_BYTES, a zero length ends the table
 *   hook-backup end <sha256 hex>\n       the hash of every byte before it
 *
 * Backup reads every table in one REPEATABLE READ snapshot and streams each to the file
 * (never a whole table in memory). Restore creates the schema by running the relay's own
 * migrations up to the archive's, then loads every table in one transaction, so a restore
 * that fails leaves no rows behind.
 *
 * SQL: a raw `pg` client, not the ORM's kysely; why, in ../README.md (How SQL is written here).
 */
import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, type WriteStream } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo, type CopyStreamQuery } from 'pg-copy-streams';
import { idTimeMs } from '@hook/core';
import { MIGRATIONS } from './migrations/index.ts';
import { createOrm, MIGRATIONS_TABLE } from './orm.ts';

/** The archive format this code writes, and the newest it reads. */
export const BACKUP_FORMAT_VERSION = 1;
const MAGIC = 'hook-backup';
const TRAILER_PREFIX = `${MAGIC} end `;
/** Each table's COPY stream is written in frames of about this size (PostgreSQL sends one message per row). */
const FRAME_BYTES = 256 * 1024;
/** A frame longer than this can only be a damaged archive (ours are ≤ FRAME_BYTES plus one row message). */
const MAX_FRAME_BYTES = 1024 * 1024 * 1024 + FRAME_BYTES;
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

/** A backup or restore that cannot go on: the message says what is wrong and how to fix it. */
export class BackupError extends Error {
  override name = 'BackupError';
}

export interface BackupColumn {
  name: string;
  /** As format_type() shows it, e.g. `timestamp with time zone`. */
  type: string;
}

export interface BackupTable {
  name: string;
  columns: BackupColumn[];
  rows: number;
}

export interface BackupSequence {
  name: string;
  table: string;
  column: string;
  /** bigint as text. */
  last_value: string;
  is_called: boolean;
}

export interface BackupHeader {
  format: typeof MAGIC;
  version: number;
  created_at: string;
  /** server_version of the database backed up. */
  server_version: string;
  /** The relay migrations applied to it, oldest first. */
  migrations: string[];
  /** In foreign-key order: a table comes after the tables it references. */
  tables: BackupTable[];
  sequences: BackupSequence[];
  /** Tables of the schema left out, and why. */
  skipped: { name: string; reason: string }[];
  /** Ids of the HOOK_SECRET_KEY the stored signing secrets are encrypted under. */
  secret_key_ids: string[];
}

interface CatalogTable {
  oid: number;
  name: string;
  kind: 'r' | 'p';
  persistence: 'p' | 'u' | 't';
}

const IDENTIFIER = (name: string): string => `"${name.replaceAll('"', '""')}"`;

async function connect(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined); // a dropped connection fails the query in flight, which reports it
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new BackupError(`cannot connect to the database (${(error as Error).message}). Check the URL, and that the server runs and accepts you.`);
  }
  return client;
}

/** The schema the relay's tables are in: where the migrations table is, through the search_path. */
async function relaySchema(client: pg.Client): Promise<string | undefined> {
  const result = await client.query<{ schema: string | null }>(
    'select n.nspname as schema from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass($1)',
    [MIGRATIONS_TABLE],
  );
  return result.rows[0]?.schema ?? undefined;
}

async function schemaTables(client: pg.Client, schema: string): Promise<CatalogTable[]> {
  const result = await client.query<CatalogTable>(
    `select c.oid::int as oid, c.relname as name, c.relkind as kind, c.relpersistence as persistence
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind in ('r', 'p') and not c.relispartition
     order by c.relname`,
    [schema],
  );
  return result.rows;
}

/** Columns COPY can write (not dropped, not generated), in table order. */
async function tableColumns(client: pg.Client, oid: number): Promise<BackupColumn[]> {
  const result = await client.query<BackupColumn>(
    `select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
     where attrelid = $1 and attnum > 0 and not attisdropped and attgenerated = '' order by attnum`,
    [oid],
  );
  return result.rows;
}

/**
 * Tables ordered so that each comes after the tables its foreign keys reference (from
 * pg_constraint), so loading them in this order never meets a missing parent row. A
 * cycle (none today) keeps its tables in name order and would need its constraints
 * deferred during the restore.
 */
async function foreignKeyOrder(client: pg.Client, tables: CatalogTable[]): Promise<CatalogTable[]> {
  const byOid = new Map(tables.map((table) => [table.oid, table]));
  const edges = await client.query<{ child: number; parent: number }>(
    `select conrelid::int as child, confrelid::int as parent from pg_constraint
     where contype = 'f' and conrelid = any($1::oid[]) and confrelid <> conrelid`,
    [tables.map((table) => table.oid)],
  );
  const parents = new Map<number, Set<number>>(tables.map((table) => [table.oid, new Set()]));
  for (const edge of edges.rows) if (byOid.has(edge.parent)) parents.get(edge.child)?.add(edge.parent);
  const ordered: CatalogTable[] = [];
  const placed = new Set<number>();
  while (ordered.length < tables.length) {
    const ready = tables.filter((table) => !placed.has(table.oid) && [...parents.get(table.oid)!].every((parent) => placed.has(parent)));
    const next = ready.length > 0 ? ready : tables.filter((table) => !placed.has(table.oid));
    for (const table of next) {
      placed.add(table.oid);
      ordered.push(table);
    }
  }
  return ordered;
}

/** Sequences owned by a column of these tables (serial, bigserial, identity). */
async function ownedSequences(client: pg.Client, tables: BackupTable[], schema: string): Promise<BackupSequence[]> {
  const result = await client.query<{ name: string; table: string; column: string }>(
    `select s.relname as name, t.relname as "table", a.attname as "column"
     from pg_depend d
     join pg_class s on s.oid = d.objid and s.relkind = 'S'
     join pg_class t on t.oid = d.refobjid
     join pg_namespace n on n.oid = t.relnamespace
     join pg_attribute a on a.attrelid = t.oid and a.attnum = d.refobjsubid
     where d.classid = 'pg_class'::regclass and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i')
       and n.nspname = $1 and t.relname = any($2::text[])
     order by 1`,
    [schema, tables.map((table) => table.name)],
  );
  const sequences: BackupSequence[] = [];
  for (const row of result.rows) {
    const value = await client.query<{ last_value: string; is_called: boolean }>(`select last_value::text, is_called from ${IDENTIFIER(schema)}.${IDENTIFIER(row.name)}`);
    sequences.push({ ...row, last_value: value.rows[0]!.last_value, is_called: value.rows[0]!.is_called });
  }
  return sequences;
}

/** Columns where the relay stores secrets sealed under HOOK_SECRET_KEY (`enc:v1:<key id>:…`). */
const SEALED_SECRET_COLUMNS: readonly [table: string, column: string][] = [
  ['destination', 'secret'],
  ['destination', 'previous_secret'],
  ['endpoint', 'verification_secret'],
  ['endpoint', 'handshake_secret'],
  ['alert_channel', 'slack_url'],
];

async function sealedSecretKeyIds(client: pg.Client, schema: string, tables: BackupTable[]): Promise<string[]> {
  const has = (table: string, column: string): boolean => tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
  const parts = SEALED_SECRET_COLUMNS.filter(([table, column]) => has(table, column)).map(
    ([table, column]) => `select split_part(${IDENTIFIER(column)}, ':', 3) as id from ${IDENTIFIER(schema)}.${IDENTIFIER(table)} where ${IDENTIFIER(column)} like 'enc:%'`,
  );
  if (parts.length === 0) return [];
  const result = await client.query<{ id: string }>(`select distinct id from (${parts.join(' union ')}) as sealed order by id`);
  return result.rows.map((row) => row.id);
}

/** Writes bytes to a file, hashing them, waiting when the file's buffer is full. */
class ArchiveWriter {
  readonly #hash: Hash = createHash('sha256');
  readonly #out: WriteStream;
  #error: Error | undefined;
  bytes = 0;

  constructor(out: WriteStream) {
    this.#out = out;
    out.on('error', (error) => (this.#error ??= error)); // a full disk, say: the next write reports it
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.#error) throw this.#error;
    this.#hash.update(chunk);
    this.bytes += chunk.length;
    if (!this.#out.write(chunk)) await once(this.#out, 'drain');
  }

  async frame(chunks: Buffer[], length: number): Promise<void> {
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(length);
    await this.write(prefix);
    for (const chunk of chunks) await this.write(chunk);
  }

  async finish(): Promise<void> {
    const trailer = Buffer.from(`${TRAILER_PREFIX}${this.#hash.copy().digest('hex')}\n`);
    this.bytes += trailer.length;
    this.#out.end(trailer);
    await finished(this.#out);
  }
}

export interface BackupResult {
  header: BackupHeader;
  /** Size of the archive file. */
  bytes: number;
}

/**
 * Writes an archive of the relay's database at `databaseUrl` to `file` (replaced whole
 * once complete: the data goes to `<file>.partial` first, so an interrupted backup never
 * leaves a file that looks whole). Tables are read in one snapshot while the relay runs.
 */
export async function backupDatabase(databaseUrl: string, file: string, options: { signal?: AbortSignal } = {}): Promise<BackupResult> {
  const partial = `${file}.partial`;
  // Opened first, so a path that cannot be written fails before any work.
  if ((await stat(file).catch(() => undefined))?.isDirectory()) throw new BackupError(`${file} is a directory. Give the archive's file path, such as ${join(file, 'hook.backup')}.`);
  let handle: FileHandle;
  try {
    handle = await open(partial, 'w', 0o600);
  } catch (error) {
    throw new BackupError(`cannot write ${partial} (${(error as Error).message}). Give a file path in a directory that exists and that you can write to.`);
  }
  let client: pg.Client;
  try {
    client = await connect(databaseUrl);
  } catch (error) {
    await handle.close();
    await rm(partial, { force: true });
    throw error;
  }
  const abort = (): void => void client.end().catch(() => undefined);
  options.signal?.addEventListener('abort', abort);
  let out: WriteStream | undefined;
  try {
    await client.query('begin isolation level repeatable read read only');
    const schema = await relaySchema(client);
    if (!schema) {
      throw new BackupError(`the database has no ${MIGRATIONS_TABLE} table, so it is not a Hook relay's database (or the relay never started on it). Point HOOK_DATABASE_URL at the relay's database.`);
    }
    const known = new Set(MIGRATIONS.map((migration) => migration.name));
    const migrations = (await client.query<{ name: string }>(`select name from ${IDENTIFIER(schema)}.${MIGRATIONS_TABLE} order by id`)).rows.map((row) => row.name);
    const unknown = migrations.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new BackupError(`the database has migration ${unknown.join(', ')}, which this relay does not know: a newer relay version runs on it. Back it up with that version (git pull && npm install).`);
    }

    const skipped: BackupHeader['skipped'] = [];
    const included: CatalogTable[] = [];
    for (const table of await schemaTables(client, schema)) {
      if (table.name === MIGRATIONS_TABLE) skipped.push({ name: table.name, reason: 'recreated by running the migrations listed in this header' });
      // Scratch state PostgreSQL itself empties after a crash (rate-limit windows): the relay copes with it empty.
      else if (table.persistence === 'u') skipped.push({ name: table.name, reason: 'unlogged: scratch state that PostgreSQL empties after a crash, and the relay starts afresh' });
      else if (table.persistence === 'p') included.push(table);
    }
    const tables: BackupTable[] = [];
    for (const table of await foreignKeyOrder(client, included)) {
      const rows = await client.query<{ rows: string }>(`select count(*) as rows from ${IDENTIFIER(schema)}.${IDENTIFIER(table.name)}`);
      tables.push({ name: table.name, columns: await tableColumns(client, table.oid), rows: Number(rows.rows[0]!.rows) });
    }
    const header: BackupHeader = {
      format: MAGIC,
      version: BACKUP_FORMAT_VERSION,
      created_at: new Date().toISOString(),
      server_version: (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version,
      migrations,
      tables,
      sequences: await ownedSequences(client, tables, schema),
      skipped,
      secret_key_ids: await sealedSecretKeyIds(client, schema, tables),
    };

    out = handle.createWriteStream();
    const writer = new ArchiveWriter(out);
    await writer.write(Buffer.from(`${MAGIC} ${BACKUP_FORMAT_VERSION}\n${JSON.stringify(header)}\n`));
    const byName = new Map(included.map((table) => [table.name, table]));
    for (const table of tables) {
      const columns = table.columns.map((column) => IDENTIFIER(column.name)).join(', ');
      const source = `${IDENTIFIER(schema)}.${IDENTIFIER(table.name)}`;
      // COPY cannot read a partitioned table directly, only a query over it.
      const sql = byName.get(table.name)!.kind === 'p' ? `copy (select ${columns} from ${source}) to stdout (format binary)` : `copy ${source} (${columns}) to stdout (format binary)`;
      const stream = client.query(copyTo(sql));
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= FRAME_BYTES) {
          await writer.frame(pending, pendingBytes);
          pending = [];
          pendingBytes = 0;
        }
      }
      if (pendingBytes > 0) await writer.frame(pending, pendingBytes);
      await writer.frame([], 0);
      await client.query('select 1'); // the COPY's row count arrives with its completion, which this waits past
      if (stream.rowCount !== table.rows) throw new BackupError(`table ${table.name}: counted ${table.rows} rows but COPY sent ${stream.rowCount}. Run the backup again.`);
    }
    await client.query('commit');
    await writer.finish();
    await rename(partial, file);
    return { header, bytes: writer.bytes };
  } catch (error) {
    if (out) out.destroy();
    else await handle.close();
    await rm(partial, { force: true });
    if (options.signal?.aborted) throw new BackupError('interrupted; no archive was written');
    if (error instanceof BackupError) throw error;
    throw new BackupError(`backup failed: ${(error as Error).message}`);
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await client.end().catch(() => undefined);
  }
}

/** Reads an archive file front to back, hashing what it consumes. */
class ArchiveReader {
  readonly #chunks: AsyncIterator<Buffer>;
  readonly #hash: Hash = createHash('sha256');
  #buffer: Buffer = Buffer.alloc(0);
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
    this.#chunks = (createReadStream(file) as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  }

  async #fill(bytes: number): Promise<boolean> {
    while (this.#buffer.length < bytes) {
      const next = await this.#chunks.next();
      if (next.done) return false;
      this.#buffer = this.#buffer.length === 0 ? next.value : Buffer.concat([this.#buffer, next.value]);
    }
    return true;
  }

  #take(bytes: number): Buffer {
    const taken = this.#buffer.subarray(0, bytes);
    this.#buffer = this.#buffer.subarray(bytes);
    this.#hash.update(taken);
    return taken;
  }

  truncated(): BackupError {
    return new BackupError(`${this.#file} ends early: it is not a whole archive (copied before the backup finished, or damaged). Use another backup.`);
  }

  async read(bytes: number): Promise<Buffer> {
    if (!(await this.#fill(bytes))) throw this.truncated();
    return this.#take(bytes);
  }

  /** A line up to `maxBytes` long, without its newline; undefined at the end of the file. */
  async line(maxBytes: number, hashed = true): Promise<string | undefined> {
    for (;;) {
      const end = this.#buffer.indexOf(0x0a);
      if (end >= 0) {
        const line = this.#buffer.subarray(0, end).toString('utf8');
        if (hashed) this.#take(end + 1);
        else this.#buffer = this.#buffer.subarray(end + 1);
        return line;
      }
      if (this.#buffer.length > maxBytes) return undefined;
      const next = await this.#chunks.next();
      if (next.done) return undefined;
      this.#buffer = Buffer.concat([this.#buffer, next.value]);
    }
  }

  digest(): string {
    return this.#hash.copy().digest('hex');
  }

  async atEnd(): Promise<boolean> {
    return !(await this.#fill(1));
  }

  async close(): Promise<void> {
    await this.#chunks.return?.();
  }
}

/** Opens an archive and reads its header, refusing anything this relay cannot restore. */
async function openArchive(file: string): Promise<{ reader: ArchiveReader; header: BackupHeader }> {
  let reader: ArchiveReader;
  try {
    reader = new ArchiveReader(file);
    await reader.atEnd(); // surfaces a missing or unreadable file here
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new BackupError(code === 'ENOENT' ? `${file} does not exist. Give the path of an archive written by npm run backup.` : `cannot read ${file} (${(error as Error).message}).`);
  }
  const notArchive = new BackupError(`${file} is not a Hook backup archive (it does not start with '${MAGIC} <version>'). Give the path of a file written by npm run backup.`);
  const first = await reader.line(64);
  const match = first === undefined ? null : /^hook-backup (\d+)$/.exec(first);
  if (!match) throw notArchive;
  const version = Number(match[1]);
  if (version > BACKUP_FORMAT_VERSION) {
    throw new BackupError(`${file} is archive format ${version}, written by a newer relay; this one reads format ${BACKUP_FORMAT_VERSION}. Restore it with the relay version that wrote it, or newer (git pull && npm install).`);
  }
  const headerLine = await reader.line(MAX_HEADER_BYTES);
  if (headerLine === undefined) throw reader.truncated();
  let header: BackupHeader;
  try {
    header = JSON.parse(headerLine) as BackupHeader;
  } catch {
    throw notArchive;
  }
  if (header.format !== MAGIC || !Array.isArray(header.migrations) || !Array.isArray(header.tables)) throw notArchive;
  return { reader, header };
}

/**
 * The archive's migrations must be this relay's first ones, in order: a migration this
 * relay lacks means the archive comes from a newer relay, whose schema it cannot build.
 */
function checkMigrations(file: string, header: BackupHeader): void {
  const ours = MIGRATIONS.map((migration) => migration.name);
  const newer = header.migrations.filter((name) => !ours.includes(name));
  if (newer.length > 0) {
    throw new BackupError(
      `${file} comes from a newer relay: its database has migration ${newer.join(', ')}, and this relay knows migrations up to ${ours.at(-1)}. ` +
        'Restore it with that relay version or newer (git pull && npm install), then run the restore again.',
    );
  }
  header.migrations.forEach((name, index) => {
    if (ours[index] !== name) throw new BackupError(`${file} lists migrations in an order this relay never applies them (${name} at position ${index + 1}); the archive is not one npm run backup wrote.`);
  });
}

/**
 * Whether the target can take the restore: it must be empty, or hold only the schema a
 * relay (or an earlier, failed restore) made, at or before the archive's migrations and
 * with no rows in any table. Returns the migrations already applied.
 */
async function checkTarget(client: pg.Client, header: BackupHeader): Promise<string[]> {
  const others = await client.query<{ count: number }>("select count(*)::int as count from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'");
  if (others.rows[0]!.count > 0) {
    throw new BackupError(`${others.rows[0]!.count} other session(s) are connected to the database: a relay must not run on it during the restore. Stop them, then run the restore again.`);
  }
  const schema = (await client.query<{ schema: string | null }>('select current_schema() as schema')).rows[0]?.schema;
  if (!schema) throw new BackupError('the database has no schema to create tables in (search_path names none that exists). Create the database anew, or fix the role\'s search_path.');
  const relations = await client.query<{ name: string; kind: string }>(
    `select c.relname as name, c.relkind as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f') order by c.relname`,
    [schema],
  );
  if (relations.rows.length === 0) return [];
  const notEmpty = (why: string): BackupError =>
    new BackupError(`the database is not empty: ${why}. Restore into a new, empty database (CREATE DATABASE, createdb, or your provider's console), or with the embedded PostgreSQL into a new HOOK_DATA_DIR.`);
  if (!relations.rows.some((relation) => relation.name === MIGRATIONS_TABLE)) {
    throw notEmpty(`schema ${schema} has ${relations.rows.slice(0, 5).map((relation) => relation.name).join(', ')}${relations.rows.length > 5 ? ', …' : ''}`);
  }
  const applied = (await client.query<{ name: string }>(`select name from ${IDENTIFIER(schema)}.${MIGRATIONS_TABLE} order by id`)).rows.map((row) => row.name);
  if (applied.length > header.migrations.length || applied.some((name, index) => header.migrations[index] !== name)) {
    throw notEmpty(`a relay migrated it to ${applied.at(-1)}, past the archive's ${header.migrations.at(-1) ?? '(none)'}`);
  }
  for (const relation of relations.rows) {
    if (relation.name === MIGRATIONS_TABLE || relation.kind === 'v') continue;
    const rows = await client.query(`select 1 from ${IDENTIFIER(schema)}.${IDENTIFIER(relation.name)} limit 1`);
    if (rows.rowCount) throw notEmpty(`table ${relation.name} has rows`);
  }
  return applied;
}

/** Writes one frame into a COPY FROM stream, waiting while its buffer is full; fails as soon as the COPY does. */
async function writeToCopy(stream: CopyStreamQuery, failed: Promise<void>, chunk: Buffer): Promise<void> {
  if (stream.write(chunk)) return;
  await Promise.race([once(stream, 'drain'), failed]);
}

export interface RestoreResult {
  header: BackupHeader;
  /** Migrations run to create the schema (those a previous relay had not already applied). */
  migrated: string[];
}

/**
 * Moves the rows staged in `hook_restore_stage` into history table `table`, after making
 * the partitions of each class for the span of their event ids (ids begin with their
 * receive time).
 */
async function moveStagedHistory(client: pg.Client, schema: string, table: string): Promise<void> {
  const key = table === 'event' ? 'id' : 'event_id';
  const spans = await client.query<{ retention_class: number; first: string; last: string }>(
    `select retention_class, min(${key}) as first, max(${key}) as last from hook_restore_stage where retention_class > 0 group by retention_class`);
  for (const span of spans.rows) {
    await client.query('select hook_ensure_history_partitions($1::int, $2::timestamptz, $3::timestamptz)', [span.retention_class, new Date(idTimeMs(span.first)), new Date(idTimeMs(span.last))]);
  }
  await client.query(`insert into ${IDENTIFIER(schema)}.${IDENTIFIER(table)} select * from hook_restore_stage`);
  await client.query('drop table hook_restore_stage');
}

/**
 * Restores an archive into the database at `databaseUrl`, which must be empty (see
 * checkTarget): runs the relay's migrations up to the archive's, then, in one
 * transaction, COPYs every table in the archive's foreign-key order, checks each row
 * count and the archive's hash, and moves sequences past the restored values.
 */
export async function restoreDatabase(databaseUrl: string, file: string, options: { signal?: AbortSignal } = {}): Promise<RestoreResult> {
  const { reader, header } = await openArchive(file);
  let client: pg.Client | undefined;
  const abort = (): void => void client?.end().catch(() => undefined);
  options.signal?.addEventListener('abort', abort);
  try {
    checkMigrations(file, header);
    client = await connect(databaseUrl);
    const applied = await checkTarget(client, header);

    let migrated: string[] = [];
    const target = header.migrations.at(-1);
    if (target && applied.length < header.migrations.length) {
      const orm = await createOrm({ databaseUrl, poolMax: 1 });
      try {
        migrated = (await orm.migrator.up({ to: target })).map((migration) => migration.name);
      } finally {
        await orm.close();
      }
    }
    const schema = await relaySchema(client);
    if (!schema) throw new BackupError(`the migrations did not create ${MIGRATIONS_TABLE}; is the role's search_path usable?`);

    await client.query('begin');
    const current = new Map<string, BackupColumn[]>();
    const partitioned = new Set<string>();
    for (const table of await schemaTables(client, schema)) {
      current.set(table.name, await tableColumns(client, table.oid));
      if (table.kind === 'p') partitioned.add(table.name);
    }
    for (const table of header.tables) {
      const columns = current.get(table.name);
      const same = columns?.length === table.columns.length && columns.every((column, index) => column.name === table.columns[index]!.name && column.type === table.columns[index]!.type);
      if (!same) {
        throw new BackupError(`table ${table.name} does not have the archive's columns after migrating to ${target} (archive: ${table.columns.map((c) => `${c.name} ${c.type}`).join(', ')}). The archive or this relay's migrations were changed by hand.`);
      }
    }
    // Rows a migration may have seeded are in the archive as they were at backup time.
    if (header.tables.length > 0) await client.query(`truncate ${header.tables.map((table) => `${IDENTIFIER(schema)}.${IDENTIFIER(table.name)}`).join(', ')}`);

    for (const table of header.tables) {
      const columns = table.columns.map((column) => IDENTIFIER(column.name)).join(', ');
      // History (partitioned by retention class and time, partitions.ts) is loaded beside
      // its table first: the partitions its rows need are made, then the rows moved in.
      const staged = partitioned.has(table.name) && table.columns.some((column) => column.name === 'retention_class');
      const into = staged ? 'hook_restore_stage' : `${IDENTIFIER(schema)}.${IDENTIFIER(table.name)}`;
      if (staged) await client.query(`create temp table hook_restore_stage (like ${IDENTIFIER(schema)}.${IDENTIFIER(table.name)}) on commit drop`);
      const stream = client.query(copyFrom(`copy ${into} (${columns}) from stdin (format binary)`));
      const failed = finished(stream);
      failed.catch(() => undefined);
      try {
        for (;;) {
          const length = (await reader.read(4)).readUInt32BE(0);
          if (length === 0) break;
          if (length > MAX_FRAME_BYTES) throw new BackupError(`${file} is damaged (a frame of table ${table.name} claims ${length} bytes). Use another backup.`);
          await writeToCopy(stream, failed, await reader.read(length));
        }
        stream.end();
        await failed;
      } catch (error) {
        stream.destroy();
        if (error instanceof BackupError) throw error;
        throw new BackupError(`loading table ${table.name} failed: ${(error as Error).message}`);
      }
      if (stream.rowCount !== table.rows) throw new BackupError(`table ${table.name}: the archive says ${table.rows} rows but ${stream.rowCount} were loaded; ${file} is damaged. Use another backup.`);
      if (staged) await moveStagedHistory(client, schema, table.name);
    }
    const digest = reader.digest();
    const trailer = await reader.line(TRAILER_PREFIX.length + 64, false);
    if (trailer === undefined) throw reader.truncated();
    if (trailer !== `${TRAILER_PREFIX}${digest}` || !(await reader.atEnd())) throw new BackupError(`${file} is damaged (its checksum does not match its contents). Use another backup.`);

    for (const sequence of header.sequences ?? []) {
      if (!current.has(sequence.table)) continue;
      await client.query(
        `select setval($1::regclass, greatest($2::bigint, coalesce((select max(${IDENTIFIER(sequence.column)}) from ${IDENTIFIER(schema)}.${IDENTIFIER(sequence.table)}), 0)),
           $3 or coalesce((select max(${IDENTIFIER(sequence.column)}) from ${IDENTIFIER(schema)}.${IDENTIFIER(sequence.table)}), 0) >= $2::bigint)`,
        [`${IDENTIFIER(schema)}.${IDENTIFIER(sequence.name)}`, sequence.last_value, sequence.is_called],
      );
    }
    await client.query('commit');
    // Fresh statistics, so the relay's first queries are planned for the restored sizes.
    if (header.tables.length > 0) await client.query(`analyze ${header.tables.map((table) => `${IDENTIFIER(schema)}.${IDENTIFIER(table.name)}`).join(', ')}`).catch(() => undefined);
    return { header, migrated };
  } catch (error) {
    await client?.query('rollback').catch(() => undefined);
    if (options.signal?.aborted) throw new BackupError('interrupted; nothing was restored (the database may hold the relay\'s empty tables, which a new restore accepts)');
    if (error instanceof BackupError) throw error;
    throw new BackupError(`restore failed, nothing was restored: ${(error as Error).message}`);
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await reader.close();
    await client?.end().catch(() => undefined);
  }
}

/** Reads just the header of an archive (for a summary, or to check it before restoring). */
export async function readBackupHeader(file: string): Promise<BackupHeader> {
  const { reader, header } = await openArchive(file);
  await reader.close();
  return header;
}
