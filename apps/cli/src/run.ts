/**
 * One run of `hook`: decides the output mode, parses the command line, runs the
 * command and turns whatever it threw into a report on stderr and an exit code
 * (0 ok, 1 failed, 2 usage).
 */
import { CommanderError, type Command } from 'commander';
import type { HookClient } from '@hook/client';
import { apiKeyPrefix } from '@hook/core';
import packageJson from '../package.json' with { type: 'json' };
import type { CommandContext, CommandModule } from './command.ts';
import { COMMAND_GROUPS, COMMANDS } from './commands/index.ts';
import { ConfigStore, configPath } from './config.ts';
import type { CliEnvironment } from './environment.ts';
import { NOT_LOGGED_IN, USAGE_ERROR, UsageError, UserError } from './errors.ts';
import { Output, type OutputStreams } from './output/index.ts';
import type { FixContext } from './output/failure.ts';
import { buildProgram } from './program.ts';
import { checkApiUrl, resolveSettings, type GlobalFlags } from './settings.ts';

export const CLI_VERSION: string = packageJson.version;

export interface RunIo extends OutputStreams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: CliEnvironment;
}

/** `--json` anywhere before a `--` that ends the options. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** What the words of a command line name in the command tree: the commands, down to a leaf, and the first word that names none. */
interface CommandWords {
  path: Command[];
  unknown?: string;
}

/**
 * Walks the command line through the command tree, as commander will, to find the
 * command it names before commander parses it: commander answers `--help` before it
 * notices that the command does not exist (`hook frobnicate --help` printed the help).
 */
function commandWords(program: Command, argv: readonly string[]): CommandWords {
  const path = [program];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const current = path[path.length - 1]!;
    if (word === '--' || current.commands.length === 0) break; // a leaf's words are its arguments
    if (word.startsWith('-')) {
      const takesValue = path.some((command) => command.options.some((option) => (option.long === word || option.short === word) && (option.required || option.optional)));
      if (takesValue) i++;
      continue;
    }
    if (word === 'help') continue; // commander's `hook help <command>`
    const next = current.commands.find((command) => command.name() === word || command.aliases().includes(word));
    if (!next) return { path, unknown: word };
    path.push(next);
  }
  return { path };
}

/** `hook events list`, for a command of the tree. */
function commandLine(path: readonly Command[]): string {
  return ['hook', ...path.slice(1).map((command) => command.name())].join(' ');
}

/** The long flag of commander's `-H, --header <header>`, else the short one. */
function flagName(flags: string): string {
  return /--[\w-]+/.exec(flags)?.[0] ?? flags.split(/[ ,]/)[0]!;
}

/**
 * Commander's complaint about one value as a sentence naming the option or argument:
 * "option '--limit <n>' argument '0' is invalid. must be…" → "The value '0' of --limit is
 * invalid: it must be…".
 */
function invalidValueSentence(message: string): string | undefined {
  const match = /^option '(.+?)' argument '([\s\S]*)' is invalid\. ([\s\S]*)$/.exec(message) ?? /^command-argument value '([\s\S]*)' is invalid for argument '(.+?)'\. ([\s\S]*)$/.exec(message);
  if (!match) return undefined;
  const subject = message.startsWith('option') ? `The value '${match[2]}' of ${flagName(match[1]!)}` : `The ${match[2]} '${match[1]}'`;
  const reason = match[3]!.trim().replace(/^Allowed choices are /, 'must be one of ');
  return /^must\b/.test(reason) ? `${subject} is invalid: it ${reason}` : `${subject} is invalid: ${reason}`;
}

/** Commander's parse errors as usage errors (exit 2) that name the command; its help and version exits as success. */
function fromCommander(error: CommanderError, words: CommandWords): UsageError | null {
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) return null;
  const { path } = words;
  const current = path[path.length - 1]!;
  const help = `${commandLine(path)} --help`;
  if (error.code === 'commander.help') {
    // `hook` or `hook <noun>` without the command that should follow.
    const verbs = current.commands.map((command) => command.name());
    if (path.length === 1) return new UsageError('No command given', 'Run `hook --help` to see the commands.');
    return new UsageError(`'${commandLine(path)}' needs a command: ${verbs.join(', ')}`, `Run \`${help}\` to see what each does.`);
  }
  const message = error.message.replace(/^error: /, '').trim();
  if (error.code === 'commander.unknownCommand') {
    const suggestion = /\(Did you mean (\S+)\?\)/.exec(message)?.[1];
    const detail = `'${commandLine(path)} ${words.unknown ?? message}' is not a command`;
    return new UsageError(detail, suggestion ? `Did you mean \`${commandLine(path)} ${suggestion}\`? \`${help}\` lists the commands.` : `Run \`${help}\` to see the commands.`);
  }
  const sentence = invalidValueSentence(message) ?? message.replace(/\n\(Did you mean (.+)\?\)$/, '. Did you mean $1?').replace(/\n/g, ' ');
  return new UsageError(`${sentence[0]!.toUpperCase()}${sentence.slice(1)}`, path.length === 1 ? USAGE_ERROR.fix : `Run \`${help}\` to see its arguments and options.`);
}

export async function run(argv: readonly string[], io: RunIo, commands: readonly CommandModule[] = COMMANDS): Promise<number> {
  const out = new Output(io, { json: wantsJson(argv) });
  const store = new ConfigStore(configPath(io.env));
  let exitCode = 0;
  /** What a failure's fix may refer to: where this run's URL and key came from, once known. */
  let fixContext: FixContext | undefined;

  function openContext(flags: GlobalFlags): { context: CommandContext; close(): Promise<void> } {
    const settings = resolveSettings(flags, io.env, store);
    fixContext = {
      profile: settings.profile,
      configPath: store.path,
      apiUrl: { value: settings.apiUrl, source: settings.apiUrlSource },
      apiKey: settings.apiKey === undefined || settings.apiKeySource === undefined ? undefined : { prefix: apiKeyPrefix(settings.apiKey), source: settings.apiKeySource },
    };
    const looseMode = store.looseMode();
    if (looseMode !== undefined) {
      out.warn(`${store.path} holds API keys but others can read it (mode ${looseMode.toString(8).padStart(4, '0')}); run: chmod 600 ${store.path}`);
    }
    const clients: HookClient[] = [];
    const context: CommandContext = {
      out,
      settings,
      config: store,
      env: io.env,
      stdin: io.stdin,
      async client(clientOptions = {}) {
        const apiKey = clientOptions.apiKey ?? settings.apiKey;
        if (clientOptions.needsKey !== false && apiKey === undefined) {
          throw new UserError(NOT_LOGGED_IN, `No API key for profile '${settings.profile}' (none in --api-key, HOOK_API_KEY or ${store.path})`);
        }
        const { createHookClient } = await import('@hook/client');
        const client = createHookClient({
          apiUrl: clientOptions.apiUrl ? checkApiUrl(clientOptions.apiUrl, 'flag', settings.profile, store.path) : settings.apiUrl,
          apiKey,
          userAgent: `hook-cli/${CLI_VERSION}`,
          ...(clientOptions.responseTimeoutMs !== undefined ? { responseTimeoutMs: clientOptions.responseTimeoutMs, connectTimeoutMs: clientOptions.responseTimeoutMs } : {}),
        });
        clients.push(client);
        return client;
      },
    };
    return { context, close: async () => void (await Promise.all(clients.map((client) => client.close()))) };
  }

  const program = buildProgram({
    version: CLI_VERSION,
    commands,
    groups: COMMAND_GROUPS,
    out,
    openContext,
    onExit: (code) => (exitCode = code),
  });
  const words = commandWords(program, argv);
  // A command that does not exist is the error, whatever else the line holds (--help
  // included): commander parses just the words, and names it with its suggestion.
  const parsed = words.unknown === undefined ? argv : [...words.path.slice(1).map((command) => command.name()), words.unknown];
  try {
    await program.parseAsync([...parsed], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      const usage = fromCommander(error, words);
      return usage ? out.failure(usage) : 0;
    }
    return out.failure(error, fixContext);
  }
}
