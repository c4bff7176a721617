import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript without types, run by the launcher before anything else
import { freshBuild } from '../bin/fresh-build.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A CLI folder with two sources and a build made at `builtAtMs`. */
function cliFolder(builtAtMs: number): string {
  const root = mkdtempSync(join(tmpdir(), 'hook-fresh-'));
  roots.push(root);
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'dist'));
  for (const file of ['src/main.ts', 'src/other.ts']) {
    writeFileSync(join(root, file), '');
    utimesSync(join(root, file), new Date(builtAtMs - 60_000), new Date(builtAtMs - 60_000));
  }
  writeFileSync(join(root, 'dist', 'build.json'), JSON.stringify({ built_at_ms: builtAtMs, sources: ['src/main.ts', 'src/other.ts'] }));
  return root;
}

describe('freshBuild (which entry the hook launcher runs)', () => {
  it('runs the bundle while it is newer than every source it holds', () => {
    const root = cliFolder(Date.now());
    expect(freshBuild(root)).toBe(join(root, 'dist', 'main.js'));
  });

  it('runs the sources once any of them changed after the build, or is gone, or there is no build', () => {
    const builtAtMs = Date.now() - 10_000;
    const edited = cliFolder(builtAtMs);
    utimesSync(join(edited, 'src/other.ts'), new Date(), new Date());
    expect(freshBuild(edited)).toBeUndefined();

    const removed = cliFolder(builtAtMs);
    rmSync(join(removed, 'src/other.ts'));
    expect(freshBuild(removed)).toBeUndefined();

    const unbuilt = cliFolder(builtAtMs);
    rmSync(join(unbuilt, 'dist', 'build.json'));
    expect(freshBuild(unbuilt)).toBeUndefined();
  });
});
