/**
 * One run of `hook`: decides the output mode, parses the command line, runs the
 * command and turns whatever it threw into a report on stderr and an exit code
 * (0 ok, 1 failed, 2 usage).
 */
import { CommanderError } from 'commander';
import type { HookClient } from '@hook/client';
import packageJson from '../package.json' with { type: 'json' };
import type { CommandContext, CommandModule } from './command.ts';
import { COMMAND_GROUPS, COMMANDS } from './commands/index.ts';
import { ConfigStore, configPath } from './config.ts';
import type { CliEnvironment } from './environment.ts';
import { NOT_LOGGED_IN, UsageError, UserError } from './errors.ts';
import { Output, type OutputStreams } from './output/index.ts';
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

/** Global options that take a value: the word after them is not a command. */
const VALUE_OPTIONS = new Set(['--api-url', '--api-key', '--profile']);

/** `hook` or `hook <noun>` without the command that should follow, named with the choices. */
function missingCommand(argv: readonly string[], commands: readonly CommandModule[]): UsageError {
  const words = argv.filter((word, i) => !word.startsWith('-') && !VALUE_OPTIONS.has(argv[i - 1] ?? ''));
  const noun = words[0];
  const verbs = commands.filter((command) => command.path.length > 1 && command.path[0] === noun).map((command) => command.path[1]);
  if (noun !== undefined && verbs.length > 0) {
    return new UsageError(`'hook ${noun}' needs a command: ${verbs.join(', ')}`, `Run \`hook ${noun} --help\` to see what each does.`);
  }
  return new UsageError('hook needs a command', 'Run `hook --help` to see the commands.');
}

/** Commander's parse errors as usage errors (exit 2); its help and version exits as success. */
function fromCommander(error: CommanderError, argv: readonly string[], commands: readonly CommandModule[]): UsageError | null {
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) return null;
  if (error.code === 'commander.help') return missingCommand(argv, commands);
  return new UsageError(error.message.replace(/^error: /, '').replace(/\n/g, ' '));
}

export async function run(argv: readonly string[], io: RunIo, commands: readonly CommandModule[] = COMMANDS): Promise<number> {
  const out = new Output(io, { json: wantsJson(argv) });
  const store = new ConfigStore(configPath(io.env));
  let exitCode = 0;

  function openContext(flags: GlobalFlags): { context: CommandContext; close(): Promise<void> } {
    const settings = resolveSettings(flags, io.env, store);
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
          apiUrl: clientOptions.apiUrl ? checkApiUrl(clientOptions.apiUrl, 'flag', settings.profile) : settings.apiUrl,
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
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      const usage = fromCommander(error, argv, commands);
      return usage ? out.failure(usage) : 0;
    }
    return out.failure(error);
  }
}
