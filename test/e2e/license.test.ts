/**
 * Hook is licensed under Apache-2.0: the LICENSE at the root, every workspace's
 * package.json, and the README saying so (the CLI tarball's copy is checked by
 * cli-install.test.ts, which packs it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.ts';

const read = (...path: string[]): string => readFileSync(join(repoRoot, ...path), 'utf8');

describe('the licence', () => {
  it('is Apache-2.0 at the root, in every package.json and in the README', () => {
    expect(read('LICENSE')).toMatch(/^\s*Apache License\n\s*Version 2\.0, January 2004\n/);
    const manifests = ['package.json', 'test/package.json', ...['apps', 'packages'].flatMap((dir) => readdirSync(join(repoRoot, dir)).map((name) => `${dir}/${name}/package.json`))];
    const licenses = Object.fromEntries(manifests.map((path) => [path, JSON.parse(read(path)).license]));
    expect(Object.keys(licenses).length).toBeGreaterThanOrEqual(8);
    expect(licenses).toEqual(Object.fromEntries(manifests.map((path) => [path, 'Apache-2.0'])));
    // The CLI's package root holds the same text, so npm pack puts it in the tarball.
    expect(read('apps/cli/LICENSE')).toBe(read('LICENSE'));
    expect(read('README.md')).toMatch(/## Licen[cs]e\n\n[^#]*Apache License 2\.0 \(\[LICENSE\]\(LICENSE\)\)/);
  });
});
