/**
 * Plans of what the relay and the retention code really run, for `npm run bench:scale`
 * (scale.ts): a role whose sessions load auto_explain (every statement's plan with
 * ANALYZE and BUFFERS, nested statements included) and log every statement's duration,
 * so the plans are those of the code as it is, with its parameters, whatever the list
 * queries look like today. The embedded server writes them to its log file; a caller
 * notes the file's size before and after what it wants and reads what lies between.
 */
import { readFileSync, statSync } from 'node:fs';
import pg from 'pg';

export const EXPLAIN_ROLE = 'bench_explain';

/** Creates the role (a superuser: the relay and the retention code may do anything they do in production) with auto_explain loaded in each of its sessions. */
export async function createExplainRole(adminUrl: string, password: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create role ${EXPLAIN_ROLE} login superuser password '${password.replace(/'/g, "''")}'`);
    for (const setting of [
      `session_preload_libraries = 'auto_explain'`,
      'auto_explain.log_min_duration = 0',
      'auto_explain.log_analyze = on',
      'auto_explain.log_buffers = on',
      'auto_explain.log_nested_statements = on',
      // utility statements (ALTER TABLE … DETACH, DROP TABLE) have no plan: their durations
      'log_min_duration_statement = 0',
    ]) {
      await client.query(`alter role ${EXPLAIN_ROLE} set ${setting}`);
    }
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.username = EXPLAIN_ROLE;
  url.password = password;
  return url.toString();
}

/** The log file's size now: where what follows starts. */
export function logOffset(path: string): number {
  return statSync(path).size;
}

/** One log entry: its first line and the lines that continue it. */
interface Entry {
  text: string;
}

/** The entries written to the log between two offsets. */
function entriesBetween(path: string, from: number, to: number): Entry[] {
  const text = readFileSync(path).subarray(from, to).toString('utf8');
  const entries: Entry[] = [];
  for (const line of text.split('\n')) {
    if (/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/.test(line)) entries.push({ text: line });
    else if (entries.length > 0 && line !== '') entries.at(-1)!.text += `\n${line}`;
  }
  return entries;
}

/** A statement without a plan (DDL): its duration line is kept. */
const UTILITY = /duration: [\d.]+ ms\s+(?:statement|execute [^:]*):\s*(?:alter|drop|create|vacuum|analyze|lock)\b/i;

/** A statement logged with its plan (auto_explain) or, for one without a plan, its duration. */
export interface LoggedStatement {
  kind: 'plan' | 'utility';
  /** The SQL as the code sent it. */
  statement: string;
  /** The log entry without its timestamp prefix: duration, query text, plan. */
  text: string;
}

/**
 * The plans (and the durations of statements that have none, such as ALTER TABLE … DETACH)
 * logged between two offsets that name one of the history tables (or match `mention`).
 */
export function statementsBetween(path: string, from: number, to: number, mention = /\b(event|delivery|attempt)\b|partition/): LoggedStatement[] {
  const out: LoggedStatement[] = [];
  for (const entry of entriesBetween(path, from, to)) {
    const isPlan = /duration: [\d.]+ ms\s+plan:/.test(entry.text);
    if (!(isPlan || UTILITY.test(entry.text)) || !mention.test(entry.text)) continue;
    const text = entry.text.replace(/^\S+ \S+ \S+ \[\d+\] /, '');
    // the log indents each line of an entry after the first with a tab
    const statement = isPlan
      ? (/Query Text: ([\s\S]*?)\n\t(?:Query Parameters|\S.*\(cost=)/.exec(text)?.[1] ?? text).replace(/\n\t/g, '\n').trim()
      : text.replace(/^LOG:\s+duration: [\d.]+ ms\s+(?:statement|execute [^:]*):\s*/, '').trim();
    out.push({ kind: isPlan ? 'plan' : 'utility', statement, text });
  }
  return out;
}

/** Whether EXPLAIN ANALYZE may run a statement again: a read (no data-modifying part) with its values in its text. */
export function replayable(statement: string): boolean {
  return /^\s*(select|with)\b/i.test(statement) && !/\b(insert|update|delete)\b|\bfor update\b|\$\d|pg_advisory|hook_ensure/i.test(statement);
}

/** The entries for a report, a statement repeated right after itself (a loop's batches) shown once with the number of repeats. */
export function formatStatements(statements: readonly LoggedStatement[], render: (statement: LoggedStatement) => string = (s) => s.text): string[] {
  const out: string[] = [];
  let previous: string | undefined;
  let repeats = 0;
  const flush = (): void => {
    if (repeats > 0) out.push(`  (the same statement ${repeats} more time(s), not shown)`);
    repeats = 0;
  };
  for (const statement of statements) {
    if (statement.statement === previous) {
      repeats++;
      continue;
    }
    flush();
    previous = statement.statement;
    out.push(render(statement));
  }
  flush();
  return out;
}
