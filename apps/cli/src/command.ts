/**
 * What a command file exports, and what it gets when it runs. A command file
 * (`commands/<noun>/<verb>.ts`) describes its arguments and options with commander,
 * and its `run` does the work through the context: the REST client, the resolved
 * settings, the config file and the output. It never writes to stdout or stderr itself.
 */
import type { Command } from 'commander';
import type { HookClient } from '@hook/client';
import type { ConfigStore } from './config.ts';
import type { CliEnvironment } from './environment.ts';
import type { Output } from './output/index.ts';
import type { Settings } from './settings.ts';

export interface CommandContext {
  out: Output;
  /** API URL, key and profile after precedence (flags, then environment, then profile, then default). */
  settings: Settings;
  config: ConfigStore;
  env: CliEnvironment;
  /** Where `--data -` reads from. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /**
   * A REST client for the resolved URL and key, made on first use and closed after the
   * run. Fails with `not_logged_in` when no key is configured, unless `needsKey` is false.
   * `responseTimeoutMs` bounds each answer (and connection) for a command that must keep to a deadline.
   */
  client(options?: { needsKey?: boolean; apiUrl?: string; apiKey?: string; responseTimeoutMs?: number }): Promise<HookClient>;
}

export interface CommandModule {
  /** The words that run it: `['endpoints', 'create']`, `['signup']`. */
  readonly path: readonly string[];
  /** One line for `hook --help`. */
  readonly summary: string;
  /** Longer text for `hook <command> --help`, when one line is not enough. */
  readonly description?: string;
  /** Example command lines with what each does, shown in `--help`. */
  readonly examples: ReadonlyArray<readonly [commandLine: string, what: string]>;
  /** Declares arguments and options (and their parsers) on the command. */
  configure?(command: Command): void;
  /**
   * Does the work. `args` are the parsed positional arguments, in order; `options` the
   * command's own options (camelCase). Resolves to the exit code (default 0).
   */
  run(context: CommandContext, args: unknown[], options: Record<string, unknown>): Promise<number | void>;
}

/**
 * A command with its argument and option types spelled out by its author (commander
 * fills them at run time from what `configure` declared).
 */
export function defineCommand<Args extends unknown[], Options extends object>(command: {
  path: readonly string[];
  summary: string;
  description?: string;
  examples: ReadonlyArray<readonly [string, string]>;
  configure?(command: Command): void;
  run(context: CommandContext, args: Args, options: Options): Promise<number | void>;
}): CommandModule {
  return command as unknown as CommandModule;
}
