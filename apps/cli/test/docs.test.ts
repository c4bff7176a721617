import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allCliErrors } from '../src/errors.ts';
import { COMMANDS } from '../src/commands/index.ts';

const cliDoc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');

/** Codes the client makes up itself (HookApiError for answers that are not the Hook API). */
const CLIENT_CODES = ['unexpected_response'];

describe('docs/cli.md', () => {
  it('lists every CLI error code, and no other, in its Errors table', () => {
    const errorsSection = cliDoc.split('\n## Errors\n')[1]!;
    const documented = [...errorsSection.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual([...allCliErrors().map((error) => error.code), ...CLIENT_CODES].sort());
  });

  it('documents every command', () => {
    for (const command of COMMANDS) expect(cliDoc, command.path.join(' ')).toContain(`### \`hook ${command.path.join(' ')}\``);
  });
});
