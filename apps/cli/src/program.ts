/**
 * Builds the commander program from the command registry: the global options, one
 * commander command per registry entry (nouns become parent commands), help texts with
 * examples. Parsing errors are thrown, never printed here: `run` reports them.
 */
import { Command, CommanderError, Help, Option } from 'commander';
import type { CommandContext, CommandModule } from './command.ts';
import type { Output } from './output/index.ts';
import type { GlobalFlags } from './settings.ts';

export interface ProgramOptions {
  version: string;
  commands: readonly CommandModule[];
  /** One line per noun (`endpoints`, `events`) for `hook --help`. */
  groups: Readonly<Record<string, string>>;
  out: Output;
  /** Makes the context a command runs in, from the global flags; `close` runs after the command. */
  openContext(flags: GlobalFlags): { context: CommandContext; close(): Promise<void> };
  /** Receives the command's exit code. */
  onExit(code: number): void;
}

function examplesText(examples: CommandModule['examples']): string {
  if (examples.length === 0) return '';
  return `\nExamples:\n${examples.map(([line, what]) => `  $ ${line}\n      ${what}`).join('\n')}\n`;
}

export function buildProgram(options: ProgramOptions): Command {
  const { out } = options;
  const program = new Command('hook')
    .description('Hook: receive webhooks at stable URLs, inspect and replay them, and forward them to localhost.')
    // Not commander's .version(): that prints only the text, and --json wants a document.
    .addOption(new Option('-V, --version', 'print the version of hook (with --json: {"version": …, "node": …})'))
    .on('option:version', () => {
      out.answer({ version: options.version, node: process.versions.node }, options.version);
      throw new CommanderError(0, 'commander.version', options.version);
    })
    .helpOption('-h, --help', 'show help for a command')
    .helpCommand('help [command]', 'show help for a command')
    .addOption(new Option('--api-url <url>', 'relay base URL (env HOOK_API_URL; default http://127.0.0.1:8080)'))
    .addOption(new Option('--api-key <key>', 'API key, hk_… (env HOOK_API_KEY)'))
    .addOption(new Option('--profile <name>', 'config profile to use (default "default")'))
    .addOption(new Option('--json', 'print one JSON document on stdout; errors as JSON on stderr'))
    .configureHelp({
      showGlobalOptions: true,
      // A repeatable option starts from [] (-H, --allowed-ip): "(default: [])" tells a person nothing.
      optionDescription(option: Option): string {
        const shown = Array.isArray(option.defaultValue) && option.defaultValue.length === 0 ? Object.assign(Object.create(option) as Option, { defaultValue: undefined }) : option;
        return Help.prototype.optionDescription.call(this, shown);
      },
    })
    .configureOutput({
      writeOut: (text) => out.help(text),
      writeErr: (text) => out.usageHelp(text),
      // The error itself is reported by run(), as text or JSON.
      outputError: () => {},
    })
    .exitOverride()
    .showSuggestionAfterError(true);

  const parents = new Map<string, Command>([['', program]]);
  function parentOf(path: readonly string[]): Command {
    const key = path.slice(0, -1).join(' ');
    const existing = parents.get(key);
    if (existing) return existing;
    const grandparent = parentOf(path.slice(0, -1));
    const noun = path[path.length - 2]!;
    const parent = grandparent.command(noun).description(options.groups[key] ?? '');
    parents.set(key, parent);
    return parent;
  }

  for (const module of options.commands) {
    const command = parentOf(module.path).command(module.path[module.path.length - 1]!);
    command.summary(module.summary).description(module.description ?? module.summary);
    module.configure?.(command);
    command.addHelpText('after', examplesText(module.examples));
    command.action(async (...actionArgs: unknown[]) => {
      const self = actionArgs[actionArgs.length - 1] as Command;
      const flags = self.optsWithGlobals<GlobalFlags & { json?: boolean }>();
      const { context, close } = options.openContext({ apiUrl: flags.apiUrl, apiKey: flags.apiKey, profile: flags.profile });
      try {
        options.onExit((await module.run(context, self.processedArgs, self.opts())) ?? 0);
      } finally {
        await close();
      }
    });
  }

  // Each noun's help lists the examples of its verbs.
  for (const [key, parent] of parents) {
    if (key === '') continue;
    parent.addHelpText('after', examplesText(options.commands.filter((module) => module.path.slice(0, -1).join(' ') === key).flatMap((module) => module.examples.slice(0, 1))));
  }
  program.addHelpText('after', `${examplesText([
    ['hook signup', 'create an account on the relay and save its API key'],
    ['hook endpoints create orders --destination https://example.com/webhooks', 'an endpoint that delivers to your server'],
    ['hook send orders --data \'{"type":"order.created"}\'', 'send it a test event'],
    ['hook listen 3000', 'forward events to a server on this machine (http://127.0.0.1:3000)'],
    ['hook events list --endpoint orders --status failed,retrying', 'see what is failing'],
    ['hook events replay --endpoint orders', 'replay every failing event (failed or retrying)'],
  ])}\nEvery command takes --json. Exit codes: 0 ok, 1 failed, 2 usage error. Docs: docs/cli.md\n`);
  return program;
}
