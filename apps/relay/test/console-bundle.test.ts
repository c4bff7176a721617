// The console's browser bundle: built from the npm packages into a directory of its own,
// rebuilt when missing or older than a source it was made from (as at relay start).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConsoleBundle, consoleBundleIsFresh, ensureConsoleBundle } from '../src/console/bundle.ts';

const root = mkdtempSync(join(tmpdir(), 'hook-console-bundle-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the console bundle', () => {
  it('is built when missing, with Preact inside and nothing loaded from elsewhere', async () => {
    const dir = join(root, 'fresh');
    expect(consoleBundleIsFresh(dir)).toBe(false);
    await ensureConsoleBundle(dir);
    expect(consoleBundleIsFresh(dir)).toBe(true);
    const script = readFileSync(join(dir, 'console.js'), 'utf8');
    expect(script).not.toMatch(/\bimport\s*["'(]|from\s*["']/); // one self-contained file: no import of anything at run time
    // no CDN: the only URLs are SVG's namespace and form placeholders (reserved example
    // domains, and where Slack's incoming-webhook URLs start), which nothing loads
    expect(script).not.toMatch(/https?:\/\/(?!www\.w3\.org\/|([\w-]+\.)*example\.com[/:]|hooks\.slack\.com\/services\/)[\w.-]+\//);
    const info = JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8'));
    expect(info.sources).toContain('src/console/ui/main.tsx');
    expect(info.sources).toContain('src/console/ui/inspector.tsx');
    expect(readFileSync(join(dir, 'inspector.js'), 'utf8')).toContain('renderInspector');
  });

  it('is built again when a source is newer than the bundle', async () => {
    const dir = join(root, 'stale');
    await buildConsoleBundle(dir);
    const info = JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8'));
    writeFileSync(join(dir, 'build.json'), JSON.stringify({ ...info, built_at_ms: 0 })); // as if every source changed since
    expect(consoleBundleIsFresh(dir)).toBe(false);
    await ensureConsoleBundle(dir);
    expect(consoleBundleIsFresh(dir)).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8')).built_at_ms).toBeGreaterThan(0);
  });
});
