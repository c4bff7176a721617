/**
 * Wording every message of the CLI keeps: numbers with a proper singular or plural, not
 * "delivery(ies)" or "event(s)". Read from every source file, so new messages are held to it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOURCE_DIRECTORY = fileURLToPath(new URL('../src/', import.meta.url));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(directory, entry.name)) : entry.name.endsWith('.ts') ? [join(directory, entry.name)] : [],
  );
}

describe('the CLI\'s messages', () => {
  it('say "1 delivery" and "2 deliveries", never "delivery(ies)" or "event(s)"', () => {
    const hedged = sourceFiles(SOURCE_DIRECTORY).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, index) => [line, index + 1] as const)
        .filter(([line]) => !/^\s*(?:\/\/|\/\*\*?|\*)/.test(line))
        .filter(([line]) => /[a-z]\((?:s|es|ies)\)/.test(line.replace(/https?\(s\)/g, '')))
        .map(([line, number]) => `${file.slice(SOURCE_DIRECTORY.length)}:${number}: ${line.trim()}`),
    );
    expect(hedged).toEqual([]);
  });
});
