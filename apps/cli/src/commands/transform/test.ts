import { readFile } from 'node:fs/promises';
import { Option } from 'commander';
import type { TransformationTestRequest, TransformationTestResult } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { INPUT_UNREADABLE, TRANSFORM_TEST_FAILED, UsageError, UserError } from '../../errors.ts';

interface TestOptions {
  file: string;
  event?: string;
  request?: string;
}

async function readInput(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UserError(INPUT_UNREADABLE, `Cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, `Check the path given to ${what === 'the code' ? '--file' : '--request'}.`);
  }
}

/** Under a body a terminal shows only the start of. */
const ALL_OF_IT = 'the same command with --json has all of it (in "request.body")';

function failureLine(result: TransformationTestResult): string {
  const error = result.error ?? { message: 'unknown error', line: null };
  return `The transformation failed${error.line === null ? '' : ` at line ${error.line}`}: ${error.message}`;
}

export default defineCommand<[], TestOptions>({
  path: ['transform', 'test'],
  summary: 'Run a transformation against a stored event or a request in a file; delivers nothing',
  description:
    'Runs the code in --file (POST /v1/transformations/test) against a stored event (--event) or the request in a JSON file ' +
    '(--request: {method?, path?, query?, headers?, body?, type?}) and prints the request it returns, the type it set and its console output.\n' +
    'Exits 1 when the transformation fails (the error and its line go to stderr). Nothing is delivered.',
  examples: [
    ['hook transform test --file transform.js --event evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'try the code on a real event'],
    ['hook transform test --file transform.js --request request.json --json', 'on a request of your own, as JSON'],
  ],
  configure(command) {
    command
      .requiredOption('--file <path>', 'the transformation code (JavaScript)')
      .addOption(new Option('--event <event>', 'run against this stored event (evt_…)').conflicts('request'))
      .addOption(new Option('--request <path>', 'run against the request in this JSON file').conflicts('event'));
  },
  async run(context, _args, options) {
    if (options.event === undefined && options.request === undefined) {
      throw new UsageError('Say what to run the code on', 'Pass --event evt_… (a stored event) or --request <file.json>.');
    }
    const code = await readInput(options.file, 'the code');
    const body: TransformationTestRequest = { code };
    if (options.event !== undefined) body.event_id = options.event;
    else {
      const text = await readInput(options.request!, 'the request');
      try {
        body.request = JSON.parse(text) as TransformationTestRequest['request'];
      } catch (error) {
        throw new UserError(INPUT_UNREADABLE, `${options.request} is not JSON: ${(error as Error).message}`, 'The file holds one JSON object: {"method"?, "path"?, "query"?, "headers"?, "body"?, "type"?}.');
      }
    }
    const client = await context.client();
    const result = await client.transformations.test(body);
    const logs = result.logs.map((log) => `[${log.level}] ${log.message}`).join('\n');
    const logBlocks = result.logs.length > 0 ? [{ kind: 'heading' as const, text: 'Console' }, { kind: 'text' as const, text: logs }] : [];
    if (!result.ok) {
      await context.out.result(result, [{ kind: 'text', text: failureLine(result) }, ...logBlocks]);
      throw new UserError(TRANSFORM_TEST_FAILED, failureLine(result));
    }
    const request = result.request!;
    await context.out.result(result, [
      { kind: 'text', text: 'The transformation ran. It would deliver:' },
      {
        kind: 'fields',
        rows: [
          ['Method', request.method],
          ['Path', request.path === '' ? '(none)' : request.path],
          ['Query', request.query === '' ? '(none)' : request.query],
          ...(result.type !== undefined ? [['Type', result.type ?? '(none)'] as const] : []),
        ],
      },
      { kind: 'heading', text: 'Headers' },
      { kind: 'fields', rows: Object.entries(request.headers).map(([name, value]) => [name, value] as const) },
      { kind: 'heading', text: 'Body' },
      request.body === undefined || request.body === ''
        ? { kind: 'text', text: '(empty)' }
        : typeof request.body === 'string'
          ? { kind: 'body', text: request.body, json: false, whole: ALL_OF_IT }
          : { kind: 'body', text: JSON.stringify(request.body), json: true, whole: ALL_OF_IT },
      ...logBlocks,
    ]);
  },
});
