/**
 * `hook` on a real pseudo-terminal (util-linux `script`), its output fed into a terminal
 * emulator (xterm.js, headless), so a test reads the screen a person would see: rows as
 * they are after every cursor move and erase, which rows are the continuation of a
 * wrapped line, and each cell's colour.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import xterm from '@xterm/headless';
import { HOOK_BIN, repoRoot, type HookUser } from './cli.ts';

const running = new Set<ChildProcess>();

export interface ScreenRow {
  text: string;
  /** This row continues the one above: the terminal wrapped a line that was too long. */
  wrapped: boolean;
}

export interface TerminalRun {
  readonly columns: number;
  /** Every row written so far, scrollback included, top to bottom (trailing blank rows left out). */
  rows(): ScreenRow[];
  /** The screen as text, for failure messages. */
  text(): string;
  /** Everything the program wrote, escape codes and all. */
  raw(): string;
  /** Resolves once `accept` holds for the rows (checked after every write); rejects after `timeoutMs` with the screen. */
  waitFor(what: string, accept: (rows: ScreenRow[]) => boolean, timeoutMs?: number): Promise<ScreenRow[]>;
  /** The screen's lines as the program wrote them: a wrapped line's rows joined again. */
  lines(): string[];
  /**
   * The colour of a cell on the first row containing `rowWith`: the one where `cell`
   * starts, `cell` being a whole cell of the line (at its start, or after two spaces).
   * A palette index (0–255), or 'default'.
   */
  colourAt(rowWith: string, cell: string): number | 'default' | undefined;
  /** Types into the terminal (`\x03` is Ctrl-C). */
  type(keys: string): void;
  /** Sends `signal` to hook itself (every process under the pseudo-terminal), as `kill -STOP` from another shell would. */
  signalProgram(signal: NodeJS.Signals): void;
  /** Resolves with the exit code of hook (script -e passes it on). */
  exited: Promise<number | null>;
}

/** Runs `hook args` as `user` on a pseudo-terminal `columns` wide. */
export function runOnTerminal(user: HookUser, args: readonly string[], options: { columns: number; rows?: number; env?: Record<string, string> }): TerminalRun {
  const rowsHigh = options.rows ?? 40;
  const quoted = args.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', `stty cols ${options.columns} rows ${rowsHigh}; exec ${HOOK_BIN} ${quoted}`, '/dev/null'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome, TERM: 'xterm-256color', TZ: 'UTC', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  const terminal = new xterm.Terminal({ cols: options.columns, rows: rowsHigh, scrollback: 5000, allowProposedApi: true });
  let raw = '';
  const waiters = new Set<() => void>();
  const feed = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    raw += text;
    terminal.write(text, () => {
      for (const check of [...waiters]) check();
    });
  };
  child.stdout!.on('data', feed);
  child.stderr!.on('data', feed);
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      running.delete(child);
      // Let the emulator take the last bytes before anyone reads the screen.
      terminal.write('', () => resolve(code));
    }),
  );

  const rows = (): ScreenRow[] => {
    const buffer = terminal.buffer.active;
    const all: ScreenRow[] = [];
    for (let y = 0; y < buffer.length; y++) {
      const line = buffer.getLine(y)!;
      all.push({ text: line.translateToString(true), wrapped: line.isWrapped });
    }
    while (all.length > 0 && all.at(-1)!.text === '' && !all.at(-1)!.wrapped) all.pop();
    return all;
  };
  const text = (): string => rows().map((row) => `${row.wrapped ? '↪' : ' '}|${row.text}`).join('\n');

  return {
    columns: options.columns,
    rows,
    text,
    raw: () => raw,
    waitFor(what, accept, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const now = rows();
          if (!accept(now)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(now);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${what} on the ${options.columns}-column terminal within ${timeoutMs} ms; it shows:\n${text()}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    lines() {
      const joined: string[] = [];
      for (const row of rows()) {
        if (row.wrapped && joined.length > 0) joined[joined.length - 1] += row.text;
        else joined.push(row.text);
      }
      return joined;
    },
    colourAt(rowWith, needle) {
      const buffer = terminal.buffer.active;
      for (let y = 0; y < buffer.length; y++) {
        const line = buffer.getLine(y)!;
        const text = line.translateToString(false);
        if (!text.includes(rowWith)) continue;
        const x = text.startsWith(needle) ? 0 : text.indexOf(`  ${needle}`) + 2;
        if (x < 2 && !text.startsWith(needle)) return undefined;
        const cell = line.getCell(x)!;
        return cell.isFgDefault() ? 'default' : cell.getFgColor();
      }
      return undefined;
    },
    type(keys) {
      child.stdin!.write(keys);
    },
    signalProgram(signal) {
      for (const pid of descendants(child.pid!)) process.kill(pid, signal);
      // `script` stops itself when its child stops (job control), and its copying of the output with it.
      if (signal === 'SIGCONT') child.kill('SIGCONT');
    },
    exited,
  };
}

/** The processes under `pid` (children first-level first), from /proc. */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

/** Kills every terminal run still going (test clean-up). */
export async function stopAllTerminalRuns(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
