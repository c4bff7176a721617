/**
 * The cost model of bench:delivery, bench:listen and bench:ingest (docs/performance.md):
 * what one event costs, per stage of its way through the relay, in the relay's CPU,
 * PostgreSQL's time and the `hook` CLI's CPU, and what it writes (statements, row
 * versions per table, WAL).
 *
 * - The relay's CPU per stage: a V8 CPU profile (`node --cpu-prof`) of a stand-in relay
 *   that runs the phase's load again after the measured phases (the profiler adds about a
 *   third to a process's CPU, so the measured phases run without it; BENCH_COST=0 leaves
 *   the stand-in out), its samples inside the repeat's window (profile timestamps and
 *   process.hrtime share the monotonic clock), each sample given
 *   to the stage of the innermost frame that says which stage it is (STAGE_RULES: our
 *   files first, then the package the code is in). The shares of the profile's busy time
 *   are scaled to the relay's CPU over the measured phase from /proc, so the column adds up to it.
 *   What runs in a callback of its own (a socket's data, a parsed row) has no caller on
 *   its stack: the PostgreSQL client's parsing is its own line, as are the garbage
 *   collector and the runtime.
 * - PostgreSQL's time per stage: pg_stat_statements' execution and planning time of each statement
 *   (named by the comment the queue executor puts first, executor.ts), over the phase,
 *   per event. Execution time is CPU here (the data is in memory, commits do not wait for
 *   a disk in execution), and the rest of PostgreSQL's CPU from /proc (parse and bind,
 *   commits and WAL, background writers, autovacuum) is a line of its own.
 * - Row versions: pg_stat_user_tables' inserts, updates (HOT among them) and deletes,
 *   summed over each table's partitions, per event.
 *
 * pg_stat_statements must be loaded when the server starts: the embedded PostgreSQL the
 * benches start has it (statementStatisticsSettings); on a server named by
 * HOOK_BENCH_DATABASE_URL without it, the statement columns say so and the rest stands.
 */
import pg from 'pg';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { costModelEnabled, onCleanup, sampleCpu, type CpuSample } from './support.ts';

/**
 * Where the stand-in processes of a bench (see costTable) write the CPU profiles the
 * stages come from: `dir` (a bench's own setting, kept), else a temporary directory; none
 * with BENCH_COST=0. `args` go before a process's entry; `find(pid)` is its profile once
 * it has exited.
 */
export function costProfiles(dir: string | undefined): { args: string[]; find(pid: number): string | undefined } {
  if (!dir && !costModelEnabled()) return { args: [], find: () => undefined };
  let where = dir;
  if (!where) {
    const made = mkdtempSync(join(tmpdir(), 'hook-bench-profiles-'));
    onCleanup(`temporary directory ${made}`, async () => rmSync(made, { recursive: true, force: true }));
    where = made;
  }
  const directory = where;
  return {
    args: ['--cpu-prof', '--cpu-prof-dir', directory],
    find: (pid) => {
      const name = readdirSync(directory).find((file) => file.endsWith('.cpuprofile') && file.includes(`.${pid}.`));
      return name && join(directory, name);
    },
  };
}

/** The stages of an event's way, in order. */
export const STAGES = [
  'HTTP in',
  'store',
  'claim or lease',
  'prepare and sign',
  'send',
  'record',
  'stream to a listener',
  "the CLI's forward",
  'PostgreSQL client (parsing answers)',
  'logging, metrics, tracing',
  'garbage collection',
  'runtime and I/O (no JS caller)',
] as const;
export type Stage = (typeof STAGES)[number];

/**
 * Which stage a frame's code belongs to: the first rule whose pattern its URL (and, for
 * `fn`, its function) matches. `null`: the frame says nothing (shared plumbing such as
 * the queue executor); the caller further up decides. Our files come before packages,
 * so a pg call made by the claim is the claim's.
 */
const STAGE_RULES: readonly { url: RegExp; fn?: RegExp; stage: Stage | null }[] = [
  // shared plumbing: the caller decides
  { url: /packages\/db\/src\/(queue\/executor|queue\/index|batch-queue|orm)\.ts$/, stage: null },
  { url: /packages\/db\/src\/(event-writer|queue\/statements\/(insert-events|dedupe-keys))\.ts$/, stage: 'store' },
  { url: /packages\/db\/src\/(queue\/statements\/(claim-due|claim-listen|claimed-columns|release-lease|make-due|read-deliveries)|signing-secrets)\.ts$/, stage: 'claim or lease' },
  { url: /packages\/db\/src\/(attempt-recorder|event-summaries|queue\/statements\/record-results)\.ts$/, stage: 'record' },
  { url: /apps\/relay\/src\/delivery\/attempt\.ts$/, fn: /^(record|announce|recordLateAnswer)$/, stage: 'record' },
  { url: /apps\/relay\/src\/delivery\/(attempt|prepare)\.ts$/, stage: 'prepare and sign' },
  { url: /apps\/relay\/src\/transformations\//, stage: 'prepare and sign' },
  { url: /packages\/core\/src\/(signing|secret-box|secrets)\.ts$/, stage: 'prepare and sign' },
  { url: /apps\/relay\/src\/delivery\/sender\.ts$/, stage: 'send' },
  { url: /apps\/relay\/src\/delivery\/(worker|destinations)\.ts$/, stage: 'claim or lease' },
  { url: /apps\/relay\/src\/stream\/|packages\/core\/src\/stream-protocol\.ts$/, stage: 'stream to a listener' },
  { url: /apps\/relay\/src\/(tracing|logging)\.ts$|apps\/relay\/src\/plugins\/metrics\.ts$/, stage: 'logging, metrics, tracing' },
  { url: /apps\/relay\/src\/(routes|plugins)\//, stage: 'HTTP in' },
  { url: /apps\/cli\/src\/|packages\/client\/src\//, stage: "the CLI's forward" },
  // packages, by where their code is
  { url: /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+|@mikro-orm\/[^/]+|kysely)\//, stage: 'PostgreSQL client (parsing answers)' },
  { url: /node_modules\/undici\//, stage: 'send' },
  { url: /node_modules\/ws\//, stage: 'stream to a listener' },
  { url: /node_modules\/(pino|thread-stream|@opentelemetry\/[^/]+|prom-client)\//, stage: 'logging, metrics, tracing' },
  { url: /node_modules\/(fastify|@fastify\/[^/]+|find-my-way|avvio|light-my-request|fast-json-stringify|ajv|secure-json-parse|content-type|fast-querystring)\//, stage: 'HTTP in' },
  { url: /^node:_http_(server|incoming)$|node:internal\/http/, stage: 'HTTP in' },
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A window of the monotonic clock, in µs (process.hrtime / 1000, as V8's profile timestamps). */
export interface Window {
  fromUs: number;
  toUs: number;
}

/** Now on the clock of CPU profiles' timestamps, in µs. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Busy time per stage (µs) of a CPU profile's samples inside `window`. */
export function profileStages(file: string, window: Window): Map<Stage, number> {
  return new Map([...profileSamples(file, window)].map(([stage, functions]) => [stage, [...functions.values()].reduce((a, b) => a + b, 0)]));
}

/** Each stage's functions with the most self time (µs) in `window`: the profile that explains each line of the table (BENCH_COST_DETAIL=1). */
export function profileStageFunctions(file: string, window: Window, top: number): Map<Stage, [string, number][]> {
  return new Map([...profileSamples(file, window)].map(([stage, functions]) => [stage, [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)]));
}

/** Self time (µs) per stage and function of a CPU profile's samples inside `window`. */
function profileSamples(file: string, window: Window): Map<Stage, Map<string, number>> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const parent = new Map<number, ProfileNode>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node);
  }
  const stageOf = new Map<number, Stage | 'idle'>();
  const classify = (leaf: ProfileNode): Stage | 'idle' => {
    const known = stageOf.get(leaf.id);
    if (known) return known;
    let stage: Stage | 'idle' = 'runtime and I/O (no JS caller)';
    const name = leaf.callFrame.functionName;
    if (name === '(idle)') stage = 'idle';
    else if (name === '(garbage collector)') stage = 'garbage collection';
    else {
      for (let node: ProfileNode | undefined = leaf; node; node = parent.get(node.id)) {
        const rule = STAGE_RULES.find((candidate) => candidate.url.test(node!.callFrame.url) && (!candidate.fn || candidate.fn.test(node!.callFrame.functionName)));
        if (rule?.stage) {
          stage = rule.stage;
          break;
        }
      }
    }
    stageOf.set(leaf.id, stage);
    return stage;
  };
  const busy = new Map<Stage, Map<string, number>>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < window.fromUs || at >= window.toUs) return;
    const node = byId.get(id)!;
    const stage = classify(node);
    if (stage === 'idle') return;
    let functions = busy.get(stage);
    if (!functions) busy.set(stage, (functions = new Map()));
    const name = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(apps|packages)\//, '$1/')}`;
    functions.set(name, (functions.get(name) ?? 0) + delta);
  });
  return busy;
}

// ---------------------------------------------------------------------------------
// What PostgreSQL says

interface StatementRow { name: string; calls: number; exec_ms: number; plan_ms: number; plans: number; rows: number }
interface TableRow { family: string; ins: number; upd: number; hot: number; del: number }

interface DatabaseSnapshot {
  statements: Map<string, StatementRow> | null;
  tables: Map<string, TableRow>;
  commits: number;
  walBytes: number;
}

/** The statement's name: the comment the queue executor puts after its first word (a batch size at its end left off), else its first words. */
const STATEMENT_NAME = `coalesce(substring(query from '^\\w+ /\\* ([a-z0-9_]+?)(_[0-9]+)? \\*/'), left(regexp_replace(query, '\\s+', ' ', 'g'), 40))`;

async function databaseSnapshot(client: pg.Client, withStatements: boolean): Promise<DatabaseSnapshot> {
  const statements = withStatements
    ? new Map((await client.query<StatementRow>(
      `select ${STATEMENT_NAME} as name, sum(calls)::float8 as calls, sum(total_exec_time)::float8 as exec_ms,
              sum(total_plan_time)::float8 as plan_ms, sum(plans)::float8 as plans, sum(rows)::float8 as rows
       from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database()) group by 1`,
    )).rows.map((row) => [row.name, row]))
    : null;
  // Each table's partitions count as the table (event_r7_20261127 → event).
  const tables = new Map((await client.query<TableRow>(
    `select regexp_replace(relname, '_(r[0-9]+|open|done|current|r0)(_.*)?$', '') as family,
            sum(n_tup_ins)::float8 as ins, sum(n_tup_upd)::float8 as upd, sum(n_tup_hot_upd)::float8 as hot, sum(n_tup_del)::float8 as del
     from pg_stat_user_tables group by 1`,
  )).rows.map((row) => [row.family, row]));
  const commits = Number((await client.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = current_database()')).rows[0]!.n);
  const walBytes = Number((await client.query<{ n: string }>('select wal_bytes as n from pg_stat_wal')).rows[0]!.n);
  return { statements, tables, commits, walBytes };
}

/**
 * Which stage a statement's time is: by its name (executor.ts puts it after the first
 * word), or for a relay from before the names (BENCH_RELAY_ROOT) by how its text begins.
 */
function statementStage(name: string): Stage | 'other statements' {
  if (/^hook_insert_events|^hook_find_dedupe|^hook_dedupe|^with received as materialized/.test(name)) return 'store';
  if (/^hook_(claim|release_lease|make_due|read_deliveries|queue_has_rows|wake_workers)|^with rated as materialized|^with due as materialized/.test(name)) return 'claim or lease';
  if (/^hook_(record_results|event_summaries)|^with input as \( select \* from unnest/.test(name)) return 'record';
  return 'other statements';
}

// ---------------------------------------------------------------------------------
// A probe around one phase

/** The processes whose CPU the table shows: their role (`relay`, `CLI`) and pid, with the profile that splits it, once written. */
export interface ProfiledProcess {
  role: 'relay' | 'CLI';
  pid: number;
}

export interface CostPhase {
  label: string;
  window: Window;
  events: number;
  cpuMs: Map<number, number>;
  postgresCpuMs: number;
  statements: Map<string, StatementRow> | null;
  tables: Map<string, TableRow>;
  commits: number;
  walBytes: number;
}

/** Measures one phase: `start` before it, `stop(events)` after; the table comes later, with the profiles (costLines). */
export class CostProbe {
  readonly #client: pg.Client;
  readonly #statements: boolean;
  readonly #processes: readonly ProfiledProcess[];

  private constructor(client: pg.Client, statements: boolean, processes: readonly ProfiledProcess[]) {
    this.#client = client;
    this.#statements = statements;
    this.#processes = processes;
  }

  /** A probe on the bench's database; loads pg_stat_statements' view when the server has it. */
  static async open(databaseUrl: string, processes: readonly ProfiledProcess[]): Promise<CostProbe> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    let statements = true;
    try {
      await client.query('create extension if not exists pg_stat_statements');
      await client.query('select 1 from pg_stat_statements limit 1');
    } catch {
      statements = false; // not in shared_preload_libraries: the statement columns say so
    }
    return new CostProbe(client, statements, processes);
  }

  get processes(): readonly ProfiledProcess[] {
    return this.#processes;
  }

  /** Starts measuring a phase; resolve the result's `stop` with the events it handled. */
  async start(label: string): Promise<{ stop(events: number): Promise<CostPhase> }> {
    const pids = this.#processes.map((process) => process.pid);
    const before = await databaseSnapshot(this.#client, this.#statements);
    const cpuBefore = sampleCpu(pids);
    const fromUs = monotonicUs();
    return {
      stop: async (events) => {
        const toUs = monotonicUs();
        const cpuAfter = sampleCpu(pids);
        await waitForStatistics(this.#client, before.commits);
        const after = await databaseSnapshot(this.#client, this.#statements);
        return phaseBetween(label, { fromUs, toUs }, events, before, after, cpuBefore, cpuAfter, pids);
      },
    };
  }

  async close(): Promise<void> {
    await this.#client.end();
  }
}

/** Statistics reach the views a moment after the work (PostgreSQL flushes them at most once a second): waits until the commit count moved and then settles. */
async function waitForStatistics(client: pg.Client, commitsBefore: number): Promise<void> {
  await client.query('select pg_stat_force_next_flush()').catch(() => undefined);
  let last = -1;
  for (let i = 0; i < 40; i++) {
    const commits = Number((await client.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = current_database()')).rows[0]!.n);
    if (commits > commitsBefore && commits === last) return;
    last = commits;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function phaseBetween(label: string, window: Window, events: number, before: DatabaseSnapshot, after: DatabaseSnapshot, cpuBefore: CpuSample | null, cpuAfter: CpuSample | null, pids: readonly number[]): CostPhase {
  const cpuMs = new Map<number, number>();
  for (const pid of pids) cpuMs.set(pid, cpuBefore && cpuAfter ? cpuAfter.byPid.get(pid)! - cpuBefore.byPid.get(pid)! : Number.NaN);
  let statements: CostPhase['statements'] = null;
  if (before.statements && after.statements) {
    statements = new Map();
    for (const [name, row] of after.statements) {
      const was = before.statements.get(name) ?? { calls: 0, exec_ms: 0, plan_ms: 0, plans: 0, rows: 0 };
      if (row.calls - was.calls > 0) {
        statements.set(name, { name, calls: row.calls - was.calls, exec_ms: row.exec_ms - was.exec_ms, plan_ms: row.plan_ms - was.plan_ms, plans: row.plans - was.plans, rows: row.rows - was.rows });
      }
    }
  }
  const tables = new Map<string, TableRow>();
  for (const [family, row] of after.tables) {
    const was = before.tables.get(family) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    const delta = { family, ins: row.ins - was.ins, upd: row.upd - was.upd, hot: row.hot - was.hot, del: row.del - was.del };
    if (delta.ins || delta.upd || delta.del) tables.set(family, delta);
  }
  return {
    label,
    window,
    events,
    cpuMs,
    postgresCpuMs: cpuBefore && cpuAfter ? cpuAfter.postgresMs - cpuBefore.postgresMs : Number.NaN,
    statements,
    tables,
    commits: after.commits - before.commits,
    walBytes: after.walBytes - before.walBytes,
  };
}

// ---------------------------------------------------------------------------------
// The table

/** Per event, in ms: each process's CPU by stage, and PostgreSQL's by stage. */
export interface CostTable {
  label: string;
  events: number;
  /** role → stage → ms per event (from the profile's shares of /proc's CPU); a role without a profile has only its total. */
  processes: { role: string; totalMs: number; byStage: Map<Stage, number> | null; detail?: Map<Stage, [string, number][]> }[];
  /** PostgreSQL's time per event: by stage (execution and planning of its statements), and per statement (calls, execution, planning: a prepared statement that is planned again on every call shows here). */
  postgres: { totalMs: number; byStage: Map<string, number> | null; statements: { name: string; perEvent: number; execMs: number; planMs: number; plansPerCall: number }[] | null };
  rows: { table: string; ins: number; upd: number; hot: number; del: number }[];
  commits: number;
  walBytes: number;
}

/**
 * The phase's table. Each process's CPU (from /proc, over the phase) is split by the
 * shares of a CPU profile: `splits` by pid, a profile file and the window of it to read
 * (absent: totals only). The profile is of a stand-in run (the same load on the same
 * code in a process started with costProfiles' args, after the measured phases): the
 * profiler adds about a third to a process's CPU, so the measured phases run without
 * it and only its shares are used. A file alone (no window): the measured process
 * itself was profiled, over the phase's window.
 */
export function costTable(phase: CostPhase, processes: readonly ProfiledProcess[], splits: ReadonlyMap<number, { file: string; window: Window } | string>): CostTable {
  const per = (value: number) => (phase.events > 0 ? value / phase.events : Number.NaN);
  const roles = processes.map(({ role, pid }) => {
    const totalMs = per(phase.cpuMs.get(pid) ?? Number.NaN);
    const given = splits.get(pid);
    if (!given) return { role, totalMs, byStage: null };
    // A file alone: the process itself was profiled during the phase (its own window).
    const split = typeof given === 'string' ? { file: given, window: phase.window } : given;
    const busy = profileStages(split.file, split.window);
    const busyTotal = [...busy.values()].reduce((a, b) => a + b, 0);
    const scale = (us: number) => (busyTotal > 0 ? (totalMs * us) / busyTotal : 0);
    const detail = process.env.BENCH_COST_DETAIL === '1'
      ? new Map([...profileStageFunctions(split.file, split.window, 6)].map(([stage, functions]) => [stage, functions.map(([name, us]): [string, number] => [name, scale(us)])]))
      : undefined;
    return { role, totalMs, byStage: new Map([...busy].map(([stage, us]) => [stage, scale(us)])), ...(detail ? { detail } : {}) };
  });
  let byStage: Map<string, number> | null = null;
  let statements: CostTable['postgres']['statements'] = null;
  if (phase.statements) {
    byStage = new Map();
    statements = [];
    for (const row of phase.statements.values()) {
      const stage = statementStage(row.name);
      byStage.set(stage, (byStage.get(stage) ?? 0) + per(row.exec_ms + row.plan_ms));
      statements.push({ name: row.name, perEvent: per(row.calls), execMs: per(row.exec_ms), planMs: per(row.plan_ms), plansPerCall: row.calls > 0 ? row.plans / row.calls : 0 });
    }
    statements.sort((a, b) => b.execMs + b.planMs - a.execMs - a.planMs);
  }
  return {
    label: phase.label,
    events: phase.events,
    processes: roles,
    postgres: { totalMs: per(phase.postgresCpuMs), byStage, statements },
    rows: [...phase.tables.values()].map((row) => ({ table: row.family, ins: per(row.ins), upd: per(row.upd), hot: per(row.hot), del: per(row.del) })).sort((a, b) => a.table.localeCompare(b.table)),
    commits: per(phase.commits),
    walBytes: per(phase.walBytes),
  };
}

/** What `more` costs beyond `base` per event (delivering beyond storing, say), stage by stage. */
export function costDifference(label: string, more: CostTable, base: CostTable): CostTable {
  const minus = <K>(a: Map<K, number> | null, b: Map<K, number> | null): Map<K, number> | null => {
    if (!a || !b) return null;
    const keys = new Set([...a.keys(), ...b.keys()]);
    return new Map([...keys].map((key) => [key, (a.get(key) ?? 0) - (b.get(key) ?? 0)]));
  };
  const rowOf = (table: CostTable, name: string) => table.rows.find((row) => row.table === name) ?? { table: name, ins: 0, upd: 0, hot: 0, del: 0 };
  const tables = new Set([...more.rows, ...base.rows].map((row) => row.table));
  const baseStatements = new Map((base.postgres.statements ?? []).map((s) => [s.name, s]));
  return {
    label,
    events: more.events,
    processes: more.processes.map((process, i) => ({ role: process.role, totalMs: process.totalMs - (base.processes[i]?.totalMs ?? 0), byStage: minus(process.byStage, base.processes[i]?.byStage ?? null) })),
    postgres: {
      totalMs: more.postgres.totalMs - base.postgres.totalMs,
      byStage: minus(more.postgres.byStage, base.postgres.byStage),
      statements: more.postgres.statements && more.postgres.statements.map((s) => ({
        name: s.name,
        perEvent: s.perEvent - (baseStatements.get(s.name)?.perEvent ?? 0),
        execMs: s.execMs - (baseStatements.get(s.name)?.execMs ?? 0),
        planMs: s.planMs - (baseStatements.get(s.name)?.planMs ?? 0),
        plansPerCall: s.plansPerCall,
      })),
    },
    rows: [...tables].sort().map((name) => {
      const a = rowOf(more, name);
      const b = rowOf(base, name);
      return { table: name, ins: a.ins - b.ins, upd: a.upd - b.upd, hot: a.hot - b.hot, del: a.del - b.del };
    }),
    commits: more.commits - base.commits,
    walBytes: more.walBytes - base.walBytes,
  };
}

const fixed = (value: number, digits = 3): string => (Number.isFinite(value) ? value.toFixed(digits) : '—');

/** The table as the benches print it. */
export function costLines(table: CostTable): string[] {
  const roles = table.processes;
  const header = ['stage', ...roles.map((r) => `${r.role} CPU ms`), 'PostgreSQL ms'];
  const widths = [36, ...roles.map(() => 14), 14];
  const row = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' ');
  const statementsMs = table.postgres.byStage ? [...table.postgres.byStage.values()].reduce((a, b) => a + b, 0) : Number.NaN;
  const lines = [`cost per event, ${table.label} (${table.events} events; relay and CLI: CPU, /proc, split by a CPU profile; PostgreSQL: execution time per statement, pg_stat_statements):`, `   ${row(header)}`];
  const pgStage = (stage: string) => (table.postgres.byStage ? fixed(table.postgres.byStage.get(stage) ?? 0) : '—');
  for (const stage of STAGES) {
    const cells = roles.map((r) => (r.byStage ? fixed(r.byStage.get(stage) ?? 0) : ''));
    const postgres = ['store', 'claim or lease', 'record'].includes(stage) ? pgStage(stage) : '';
    if (cells.every((cell) => cell === '' || cell === '0.000') && (postgres === '' || postgres === '0.000')) continue;
    lines.push(`   ${row([stage, ...cells, postgres])}`);
  }
  if (table.postgres.byStage) lines.push(`   ${row(['other statements', ...roles.map(() => ''), pgStage('other statements')])}`);
  lines.push(`   ${row(['PostgreSQL outside statements (commit, WAL, background)', ...roles.map(() => ''), fixed(table.postgres.totalMs - statementsMs)])}`);
  lines.push(`   ${row(['total (/proc)', ...roles.map((r) => fixed(r.totalMs)), fixed(table.postgres.totalMs)])}`);
  if (table.postgres.statements === null) lines.push('   (PostgreSQL by statement: the server has no pg_stat_statements in shared_preload_libraries; the embedded one the benches start has)');
  else {
    lines.push(`   statements per event: calls (PostgreSQL ms executing + planning, plans per call): ${table.postgres.statements.slice(0, 6).map((s) => `${s.name} ${fixed(s.perEvent, 3)} (${fixed(s.execMs)} + ${fixed(s.planMs)}, ${fixed(s.plansPerCall, 2)})`).join(', ')}`);
  }
  lines.push(`   row versions written per event: ${table.rows.map((r) => `${r.table} ${[r.ins ? `+${fixed(r.ins, 2)}` : '', r.upd ? `upd ${fixed(r.upd, 2)}${r.hot ? ` (HOT ${fixed(r.hot, 2)})` : ''}` : '', r.del ? `del ${fixed(r.del, 2)}` : ''].filter(Boolean).join(' ')}`).join('; ') || 'none'}`);
  lines.push(`   transactions ${fixed(table.commits, 2)} and WAL ${Math.round(table.walBytes)} bytes per event`);
  for (const role of roles) {
    for (const [stage, functions] of role.detail ?? []) {
      lines.push(`   ${role.role}, ${stage}: ${functions.map(([name, ms]) => `${name} ${fixed(ms)}`).join('; ')}`);
    }
  }
  return lines;
}

/** The table as JSON (the benches' BENCH_JSON line). */
export function costJson(table: CostTable): Record<string, unknown> {
  const stages = (map: Map<string, number> | null) => map && Object.fromEntries([...map].map(([stage, ms]) => [stage, Math.round(ms * 10_000) / 10_000]));
  return {
    events: table.events,
    cpu_ms: Object.fromEntries(table.processes.map((r) => [r.role, { total: Math.round(r.totalMs * 10_000) / 10_000, by_stage: stages(r.byStage) }])),
    postgres_ms: { total: Math.round(table.postgres.totalMs * 10_000) / 10_000, by_stage: stages(table.postgres.byStage) },
    statements: table.postgres.statements?.map((s) => ({
      name: s.name, per_event: Math.round(s.perEvent * 1000) / 1000, ms: Math.round(s.execMs * 10_000) / 10_000, plan_ms: Math.round(s.planMs * 10_000) / 10_000, plans_per_call: Math.round(s.plansPerCall * 100) / 100,
    })) ?? null,
    rows: table.rows,
    transactions: Math.round(table.commits * 100) / 100,
    wal_bytes: Math.round(table.walBytes),
  };
}
