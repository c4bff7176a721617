/**
 * Every `hook …` command the CLI tells people to run (error fixes, the relay-code table,
 * hints, examples, help texts) exists in the real command tree, with the flags it names,
 * and no fix shown by the CLI names an HTTP route. Texts come from the registries and
 * from every source file under src/, so a hint added later is checked too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { allErrors } from '@hook/core';
import { HookApiError } from '@hook/client/errors';
import type { Problem } from '@hook/client';
import { COMMAND_GROUPS, COMMANDS } from '../src/commands/index.ts';
import { allCliErrors, replayFailedFix } from '../src/errors.ts';
import { describeFailure, type FixContext } from '../src/output/failure.ts';
import { Output } from '../src/output/index.ts';
import { buildProgram } from '../src/program.ts';
import { HTTP_ROUTE, RELAY_ERROR_FIXES } from '../src/relay-fixes.ts';
import type { SettingSource } from '../src/settings.ts';

const SOURCE_DIRECTORY = fileURLToPath(new URL('../src/', import.meta.url));

/** The program as `hook` builds it, writing its help into `help`. */
function program(help: { text: string } = { text: '' }): Command {
  const stdout = new PassThrough();
  stdout.on('data', (chunk: Buffer) => (help.text += chunk.toString()));
  return buildProgram({
    version: '0.0.0-test',
    commands: COMMANDS,
    groups: COMMAND_GROUPS,
    out: new Output({ stdout, stderr: new PassThrough() }, { json: false }),
    openContext: () => {
      throw new Error('no command runs in this test');
    },
    onExit: () => {},
  });
}

const tree = program();

/** The words after `hook`, checked against the tree: undefined when they name a command and its flags, else what is wrong. */
function problemWith(words: readonly string[]): string | undefined {
  const path = [tree];
  const line = `hook ${words.join(' ')}`;
  const flagExists = (flag: string): boolean =>
    ['-h', '--help'].includes(flag) || path.some((command) => command.options.some((option) => option.long === flag || option.short === flag));
  let i = 0;
  for (; i < words.length; i++) {
    const word = words[i]!;
    const current = path[path.length - 1]!;
    if (current.commands.length === 0) break;
    if (word.includes('${')) return undefined; // made at run time: checked by the tests that run it
    if (word.startsWith('-')) {
      const flag = word.split('=')[0]!;
      if (!flagExists(flag)) return `${line}: no option ${flag} on 'hook ${path.slice(1).map((command) => command.name()).join(' ')}'`;
      const option = path.flatMap((command) => command.options).find((candidate) => candidate.long === flag || candidate.short === flag);
      if (option && (option.required || option.optional) && !word.includes('=')) i++;
      continue;
    }
    if (word === 'help' || /^\[.*\]$/.test(word)) continue; // `hook help <command>`, usage lines' [options]
    const next = current.commands.find((command) => command.name() === word || command.aliases().includes(word));
    if (!next) return `${line}: '${word}' is not a command of 'hook${path.slice(1).map((command) => ` ${command.name()}`).join('')}'`;
    path.push(next);
  }
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith('-') || word === '-' || word === '--' || word.includes('${')) continue;
    const flag = word.split('=')[0]!;
    if (!flagExists(flag)) return `${line}: no option ${flag} on 'hook ${path.slice(1).map((command) => command.name()).join(' ')}'`;
  }
  return undefined;
}

/**
 * `hook …` in prose: the words after it, up to a backtick, quote, bracket, newline or the
 * end of a sentence. It is read as a command when it is in backticks, follows a cue
 * ("Run", "with:", "(") or starts with a top-level command or a flag; `hook` the program
 * in a sentence ("a bug in hook", "hook sent a body") is not a command.
 */
function mentionsIn(text: string): string[][] {
  const topLevel = new Set(tree.commands.map((command) => command.name()));
  const found: string[][] = [];
  for (const match of text.matchAll(/(?<![\w@./$-])hook((?:[ \t]+[^\s`'"()\\;|]+)*)/g)) {
    const words: string[] = [];
    for (const raw of match[1]!.trim().split(/[ \t]+/).filter(Boolean)) {
      const word = raw.replace(/[.,:!?]+$/, '');
      if (word !== '') words.push(word);
      if (word !== raw) break; // the sentence (or clause) ends here
    }
    const before = text.slice(Math.max(0, match.index - 12), match.index);
    const cued = /(?:`|[:(]\s*|\b(?:[Rr]un|[Ww]ith|[Tt]ry|[Uu]se|e\.g\.)\s+)$/.test(before);
    const first = words[0] ?? '';
    if (/^--?[a-zA-Z]/.test(first) || topLevel.has(first) || (cued && /^[a-z]/.test(first))) found.push(words);
  }
  return found;
}

/** `hook …` in a shell command line (an example): quoted words kept whole, up to a pipe or `;`. */
function commandLinesIn(line: string): string[][] {
  const tokens = [...line.matchAll(/'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"]+/g)].map((match) => match[0]);
  const found: string[][] = [];
  for (let i = tokens.indexOf('hook'); i !== -1; i = tokens.indexOf('hook', i + 1)) {
    const end = tokens.findIndex((token, j) => j > i && ['|', '||', '&&', ';', '>'].includes(token));
    found.push(tokens.slice(i + 1, end === -1 ? undefined : end));
  }
  return found;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(directory, entry.name)) : entry.name.endsWith('.ts') ? [join(directory, entry.name)] : [],
  );
}

/** A source file's text without its comments (which may talk about `hook <noun> <verb>` in general). */
function codeOf(file: string): string {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(?:\/\/|\/\*\*?|\*)/.test(line))
    .map((line) => line.replace(/\s\/\/\s.*$/, ''))
    .join('\n');
}

/** Every fix the CLI shows for a relay error, from the relay's own problem document, under each source of URL and key. */
function relayFixesShown(): Array<[string, string]> {
  const sources: SettingSource[] = ['flag', 'env', 'profile', 'default'];
  const contexts: FixContext[] = sources.flatMap((source) => [
    { profile: 'default', configPath: '/home/me/.config/hook/config.json', apiUrl: { value: 'http://127.0.0.1:8080', source }, apiKey: { prefix: 'hk_abcd', source } },
    { profile: 'prod', configPath: '/home/me/.config/hook/config.json', apiUrl: { value: 'https://hooks.example.com', source }, apiKey: { prefix: 'hk_abcd', source } },
  ]);
  const problems: Problem[] = [
    ...allErrors().map((error) => ({
      type: `urn:hook:error:${error.code}`, title: error.title, status: error.status, code: error.code, fix: error.fix, request_id: 'req_1',
      detail: error.detail.replace(/%s/g, () => "'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY' 'dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY' 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY'"),
    })),
    { type: 'urn:hook:error:unexpected_response', title: 'Unexpected response', status: 502, code: 'unexpected_response', detail: 'GET / answered 502', fix: 'Check GET /healthz.', request_id: '' },
    { type: 'urn:hook:error:from_a_newer_relay', title: 'New', status: 409, code: 'from_a_newer_relay', detail: 'new', fix: 'Call POST /v1/things first.', request_id: 'req_2' },
  ];
  return problems.flatMap((problem) => contexts.map((context): [string, string] => [problem.code, describeFailure(new HookApiError(problem), context).problem.fix]));
}

describe('the relay-code → CLI fix table', () => {
  it('has an entry for every code in the relay\'s error registry (and the client\'s unexpected_response)', () => {
    const missing = [...allErrors().map((error) => error.code), 'unexpected_response'].filter((code) => !(code in RELAY_ERROR_FIXES));
    expect(missing).toEqual([]);
  });

  it('never shows an HTTP route as the fix, whatever the relay sent', () => {
    const routed = relayFixesShown().filter(([, fix]) => HTTP_ROUTE.test(fix));
    expect(routed).toEqual([]);
    for (const error of allCliErrors()) expect(error.fix, error.code).not.toMatch(HTTP_ROUTE);
  });
});

describe('every `hook …` the CLI names exists', () => {
  it('recognises a mention of a command that does not exist, or of a flag it does not have', () => {
    expect(problemWith(['account', 'notifications', 'set', '<url>'])).toMatch(/'notifications' is not a command of 'hook account'/);
    expect(problemWith(['notifications', 'set', '<url>'])).toBeUndefined();
    expect(problemWith(['events', 'replay', '--since', '2h', '--colour'])).toMatch(/no option --colour/);
    expect(problemWith(['--profile', 'prod', 'events', 'replay', '--since', '2h'])).toBeUndefined();
    expect(mentionsIn('Set one with `hook account notifications set <url>`.')).toEqual([['account', 'notifications', 'set', '<url>']]);
    expect(commandLinesIn('cat x | hook send orders --data \'{"a": 1}\' -H \'a: b\' | jq .')).toEqual([['send', 'orders', '--data', '\'{"a": 1}\'', '-H', '\'a: b\'']]);
  });

  it('in the fixes of the CLI\'s own errors and of the relay\'s, as the CLI shows them', () => {
    const texts = [...allCliErrors().map((error) => error.fix), replayFailedFix('evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY'), ...relayFixesShown().map(([, fix]) => fix)];
    expect(texts.flatMap(mentionsIn).map(problemWith).filter(Boolean)).toEqual([]);
  });

  it('in the relay\'s own fixes, which name hook commands for the people who read them over HTTP or MCP', () => {
    expect(allErrors().flatMap((error) => mentionsIn(error.fix)).map(problemWith).filter(Boolean)).toEqual([]);
  });

  it('in the examples, summaries and descriptions of every command', () => {
    const problems = COMMANDS.flatMap((command) => [
      ...command.examples.flatMap(([line]) => commandLinesIn(line)),
      ...mentionsIn(`${command.summary}\n${command.description ?? ''}`),
    ]).map(problemWith);
    expect(problems.filter(Boolean)).toEqual([]);
    expect(Object.values(COMMAND_GROUPS).flatMap(mentionsIn).map(problemWith).filter(Boolean)).toEqual([]);
  });

  it('in the help of every command, `hook --help` included', async () => {
    const texts: string[] = [];
    for (const path of [[], ...new Set(COMMANDS.flatMap((command) => [command.path.slice(0, 1), command.path]).map((path) => path.join(' ')))].map((path) => (Array.isArray(path) ? path : path.split(' ')))) {
      const help = { text: '' };
      await program(help).parseAsync([...path, '--help'], { from: 'user' }).catch((error: unknown) => {
        if (!(error instanceof CommanderError) || error.exitCode !== 0) throw error;
      });
      expect(help.text, path.join(' ')).toContain('Usage: hook');
      texts.push(help.text);
    }
    // Defaults are written in the option's own words ("(default 30s)"); a value commander appends ("(default: 30000)") says it twice, in milliseconds.
    expect(texts.flatMap((text) => text.split('\n')).filter((line) => /\(default: (?:-?\d|"|\[|true|false)/.test(line))).toEqual([]);
    const problems = texts.flatMap((text) =>
      text.split('\n').flatMap((line) => (/^\s*\$ /.test(line) ? commandLinesIn(line.replace(/^\s*\$ /, '')) : /^Usage:/.test(line) ? [] : mentionsIn(line))),
    ).map(problemWith);
    expect(problems.filter(Boolean)).toEqual([]);
  });

  it('in every string of the CLI\'s source: hints, notes, warnings and fixes at their throw sites', () => {
    const problems = sourceFiles(SOURCE_DIRECTORY).flatMap((file) =>
      mentionsIn(codeOf(file)).map(problemWith).filter(Boolean).map((problem) => `${file.slice(SOURCE_DIRECTORY.length)}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });
});
