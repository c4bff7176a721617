/**
 * The only place the CLI writes to stdout and stderr. The output mode is decided once,
 * at the edge: `--json` puts exactly one JSON document on stdout (streams: one JSON
 * object per line) and errors as problem JSON on stderr; otherwise stdout gets readable
 * text (ink on a terminal, plain text elsewhere) and stderr gets diagnostics.
 */
import { styleText } from 'node:util';
import { renderPlain, type View } from './view.ts';
import { describeFailure, type Failure } from './failure.ts';

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export class Output {
  readonly json: boolean;
  readonly #streams: OutputStreams;
  #resultWritten = false;

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

  /** One item of a stream (`events tail`, `listen`): a JSON line in JSON mode, else `line` as text. */
  record(value: unknown, line: string): void {
    this.#streams.stdout.write(this.json ? `${JSON.stringify(value)}\n` : `${line}\n`);
  }

  /** Bytes exactly as given on stdout (an event body); nothing is added. */
  bytes(data: Uint8Array): void {
    this.#resultWritten = true;
    this.#streams.stdout.write(data);
  }

  /**
   * Hands stdout over to a protocol that owns it for the rest of the run (`hook mcp`
   * speaks MCP there): nothing else may be written to stdout afterwards, so no result
   * follows; diagnostics still go to stderr.
   */
  protocolStream(): NodeJS.WritableStream {
    this.#resultWritten = true;
    return this.#streams.stdout;
  }

  /** A diagnostic on stderr, in every mode: progress, what was saved where. */
  note(text: string): void {
    this.#streams.stderr.write(`${text}\n`);
  }

  /** A next-step suggestion on stderr, for people only (left out in JSON mode). */
  hint(text: string): void {
    if (!this.json) this.#streams.stderr.write(`${this.#style('dim', text)}\n`);
  }

  warn(text: string): void {
    this.#streams.stderr.write(`${this.#style('yellow', 'Warning:')} ${text}\n`);
  }

  /** Help text commander prints on request (--help): stdout. */
  help(text: string): void {
    this.#streams.stdout.write(text);
  }

  /** Help commander prints beside a usage error: stderr, and not in JSON mode, where the error itself is the JSON. */
  usageHelp(text: string): void {
    if (!this.json) this.#streams.stderr.write(text);
  }

  /** Reports a failure on stderr (problem JSON, or text with the fix) and returns the exit code. */
  failure(error: unknown): number {
    const failure: Failure = describeFailure(error);
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

  /**
   * `text` coloured for stdout when stdout is a terminal that takes colours (a stream line
   * such as `hook listen`'s status); plain in pipes, files, JSON mode, NO_COLOR and dumb terminals.
   */
  paint(format: Parameters<typeof styleText>[0], text: string): string {
    return this.json ? text : styleText(format, text, { stream: this.#streams.stdout as NodeJS.WriteStream });
  }

  /** Colours for a terminal only; styleText leaves text plain for pipes, NO_COLOR and dumb terminals. */
  #style(format: Parameters<typeof styleText>[0], text: string): string {
    return styleText(format, text, { stream: this.#streams.stderr as NodeJS.WriteStream });
  }
}
