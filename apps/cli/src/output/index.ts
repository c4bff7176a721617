/**
 * The only place the CLI writes to stdout and stderr. The output mode is decided once,
 * at the edge: `--json` puts exactly one JSON document on stdout (streams: one JSON
 * object per line) and errors as problem JSON on stderr; otherwise stdout gets readable
 * text (ink on a terminal, plain text elsewhere) and stderr gets diagnostics.
 */
import { styleText } from 'node:util';
import { plainLine, renderPlain, type Line, type View } from './view.ts';
import { describeFailure, type Failure, type FixContext } from './failure.ts';

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** Back to the start of the row and erase it: how the status line is rewritten in place. */
const CLEAR_ROW = '\r\x1b[2K';

/** A stream's records held back while something that must come first is written (`Output.holdRecords`). */
export interface HeldRecords {
  /** Writes a record now, ahead of the held ones. */
  first(value: unknown, line: string | Line): void;
  /** Writes the held records, in order, and stops holding. */
  release(): void;
}

export class Output {
  readonly json: boolean;
  readonly #streams: OutputStreams;
  #resultWritten = false;
  /** The terminal's status line (`status`), null when none is shown. */
  #status: string | null = null;
  #held: Array<readonly [unknown, string | Line]> | null = null;
  /** The line fitter, loaded by `prepareStream` when a terminal shows the stream. */
  #terminal: typeof import('../ui/terminal-line.ts') | undefined;
  /**
   * Stream records for a stdout that is no terminal (a pipe, a file), written together at
   * the end of this turn of the event loop: one write, not one system call per record,
   * when a stream has many at once (hook listen under load).
   */
  #unwritten = '';

  constructor(streams: OutputStreams, options: { json: boolean }) {
    this.#streams = streams;
    this.json = options.json;
  }

  /** Whether stdout is a terminal (ink renders only there). */
  get interactive(): boolean {
    return Boolean(this.#streams.stdout.isTTY);
  }

  /**
   * A command's result on stdout: `value` as one JSON document in JSON mode, else
   * `view` for a person. Called at most once per run.
   */
  async result(value: unknown, view: View | (() => View)): Promise<void> {
    if (this.#resultWritten) throw new Error('Output.result called twice: a run prints one result');
    this.#resultWritten = true;
    this.flush();
    if (this.json) {
      this.#streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      return;
    }
    const resolved = typeof view === 'function' ? view() : view;
    if (this.interactive) {
      const { renderForTerminal } = await import('../ui/render-view.ts');
      this.#streams.stdout.write(renderForTerminal(resolved, this.#streams.stdout.columns || 80));
    } else {
      this.#streams.stdout.write(renderPlain(resolved));
    }
  }

  /**
   * Loads what a stream needs on a terminal (the line fitter, for `Line` records and the
   * status line). Call it before the stream's first record; it does nothing elsewhere.
   */
  async prepareStream(): Promise<void> {
    if (!this.json && (this.#streams.stdout.isTTY || this.#streams.stderr.isTTY)) this.#terminal ??= await import('../ui/terminal-line.ts');
  }

  /**
   * One item of a stream (`events tail`, `listen`): a JSON line in JSON mode, else `line`:
   * text as it is, or a `Line`, which a terminal shows coloured and cut to its width.
   */
  record(value: unknown, line: string | Line): void {
    if (this.#held) this.#held.push([value, line]);
    else this.#writeRecord(value, line);
  }

  #writeRecord(value: unknown, line: string | Line): void {
    const { stdout } = this.#streams;
    if (this.json || !stdout.isTTY) {
      if (this.#unwritten === '') setImmediate(() => this.flush());
      this.#unwritten += `${this.json ? JSON.stringify(value) : typeof line === 'string' ? line : plainLine(line)}\n`;
      return;
    }
    const text = typeof line === 'string' ? line : this.#terminal ? this.#terminal.terminalLine(line, stdout.columns || 80, stdout) : plainLine(line);
    this.#aboveStatus(stdout, `${text}\n`);
  }

  /** Writes the stream records not written yet (they go at the end of each turn of the event loop by themselves). */
  flush(): void {
    if (this.#unwritten === '') return;
    const text = this.#unwritten;
    this.#unwritten = '';
    this.#streams.stdout.write(text);
  }

  /**
   * Holds the stream's records back (they are written on `release`) while what must come
   * before them is written with `first`: the events a reconnect caught up on.
   */
  holdRecords(): HeldRecords {
    const held: Array<readonly [unknown, string | Line]> = [];
    this.#held = held;
    return {
      first: (value, line) => this.#writeRecord(value, line),
      release: () => {
        if (this.#held === held) this.#held = null;
        for (const [value, line] of held.splice(0)) this.#writeRecord(value, line);
      },
    };
  }

  /** Whether `status` shows anything: stderr is a terminal and this is not --json. */
  get hasStatusLine(): boolean {
    return !this.json && Boolean(this.#streams.stderr.isTTY);
  }

  /**
   * The terminal's status line (stderr): one row below everything else, rewritten in place
   * by each call and cut to the terminal's width; null removes it. Other output goes above
   * it. `keep`: the text replaces the status line and stays, as a line of its own (cut to
   * the width too). Returns false, showing nothing, where there is no terminal
   * (`hasStatusLine`).
   */
  status(text: string | null, options: { keep?: boolean } = {}): boolean {
    if (!this.hasStatusLine) return false;
    const shown = this.#status !== null;
    this.#status = options.keep ? null : text;
    this.#streams.stderr.write(`${shown ? CLEAR_ROW : ''}${text === null ? '' : this.#statusText(text)}${options.keep && text !== null ? '\n' : ''}`);
    return true;
  }

  #statusText(text: string): string {
    // One column short of the width: a full row would leave the cursor waiting to wrap.
    const columns = Math.max(1, (this.#streams.stderr.columns || 80) - 1);
    return this.#terminal ? this.#terminal.fitText(text, columns) : [...text].slice(0, columns).join('');
  }

  /** Writes `text` to `stream` above the status line: the line is erased first (when it is on the same terminal) and drawn again after. */
  #aboveStatus(stream: NodeJS.WritableStream & { isTTY?: boolean }, text: string): void {
    if (this.#status === null || !stream.isTTY) {
      stream.write(text);
      return;
    }
    this.#streams.stderr.write(CLEAR_ROW);
    stream.write(text);
    this.#streams.stderr.write(this.#statusText(this.#status));
  }

  /** Bytes exactly as given on stdout (an event body); nothing is added. */
  bytes(data: Uint8Array): void {
    this.#resultWritten = true;
    this.flush();
    this.#streams.stdout.write(data);
  }

  /**
   * Hands stdout over to a protocol that owns it for the rest of the run (`hook mcp`
   * speaks MCP there): nothing else may be written to stdout afterwards, so no result
   * follows; diagnostics still go to stderr.
   */
  protocolStream(): NodeJS.WritableStream {
    this.#resultWritten = true;
    this.flush();
    return this.#streams.stdout;
  }

  /** A diagnostic on stderr, in every mode: progress, what was saved where. */
  note(text: string): void {
    this.#aboveStatus(this.#streams.stderr, `${text}\n`);
  }

  /** A next-step suggestion on stderr, for people only (left out in JSON mode). */
  hint(text: string): void {
    if (!this.json) this.#aboveStatus(this.#streams.stderr, `${this.#style('dim', text)}\n`);
  }

  warn(text: string): void {
    this.#aboveStatus(this.#streams.stderr, `${this.#style('yellow', 'Warning:')} ${text}\n`);
  }

  /** Help text commander prints on request (--help): stdout. */
  help(text: string): void {
    this.#streams.stdout.write(text);
  }

  /** Help commander prints beside a usage error: stderr, and not in JSON mode, where the error itself is the JSON. */
  usageHelp(text: string): void {
    if (!this.json) this.#streams.stderr.write(text);
  }

  /**
   * A small answer given at once, outside any command (`hook --version`): one JSON
   * document in JSON mode, else the text, on stdout.
   */
  answer(value: unknown, text: string): void {
    this.#resultWritten = true;
    this.#streams.stdout.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
  }

  /**
   * Reports a failure on stderr (problem JSON, or text with the fix) and returns the exit
   * code. `context` (the run's settings) lets a fix say where the URL or key came from.
   */
  failure(error: unknown, context?: FixContext): number {
    const failure: Failure = describeFailure(error, context);
    this.status(null);
    if (this.json) {
      this.#streams.stderr.write(`${JSON.stringify(failure.problem)}\n`);
      return failure.exitCode;
    }
    const { problem } = failure;
    const lines = [`${this.#style(['bold', 'red'], 'Error:')} ${problem.detail}${failure.fromRelay ? ` (${problem.code})` : ''}`];
    for (const field of problem.errors ?? []) lines.push(`  ${field.field}: ${field.message}`);
    if (failure.stack) lines.push(failure.stack);
    if (problem.fix) lines.push(`${this.#style('bold', 'Fix:')} ${problem.fix}`);
    if (problem.request_id) lines.push(this.#style('dim', `Request id: ${problem.request_id}`));
    this.#streams.stderr.write(`${lines.join('\n')}\n`);
    return failure.exitCode;
  }

  /** Colours for a terminal only; styleText leaves text plain for pipes, NO_COLOR and dumb terminals. */
  #style(format: Parameters<typeof styleText>[0], text: string): string {
    return styleText(format, text, { stream: this.#streams.stderr as NodeJS.WriteStream });
  }
}
