// The console's browser bundle: built from the npm packages into a directory of its own,
// rebuilt when missing or older than a source it was made from (as at relay start).
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConsoleBundle, consoleBundleIsFresh, CONSOLE_BUNDLE_FILES, ensureConsoleBundle } from '../src/console/bundle.ts';

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

  it('holds the stylesheet and each file compressed beside it (brotli and gzip), the same bytes once decompressed', async () => {
    const dir = join(root, 'compressed');
    await buildConsoleBundle(dir);
    expect(readFileSync(join(dir, 'console.css')).equals(readFileSync(new URL('../src/console/console.css', import.meta.url)))).toBe(true);
    for (const file of CONSOLE_BUNDLE_FILES) {
      const original = readFileSync(join(dir, file));
      const brotli = readFileSync(join(dir, `${file}.br`));
      const gzipped = readFileSync(join(dir, `${file}.gz`));
      expect(brotliDecompressSync(brotli).equals(original), file).toBe(true);
      expect(gunzipSync(gzipped).equals(original), file).toBe(true);
      expect(brotli.length, file).toBeLessThan(original.length / 2);
    }
    const info = JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8'));
    expect(info.sources).toContain('src/console/console.css'); // a change to the stylesheet makes the bundle stale
    expect(info.files).toEqual(expect.arrayContaining(['console.js.br', 'console.js.gz', 'console.css.br', 'inspector.js.gz']));
  });

  it('is built again when a compressed form is missing, or build.json does not list them (a bundle from before them)', async () => {
    const dir = join(root, 'partial');
    await buildConsoleBundle(dir);
    expect(consoleBundleIsFresh(dir)).toBe(true);
    unlinkSync(join(dir, 'console.js.br'));
    expect(consoleBundleIsFresh(dir)).toBe(false);
    await ensureConsoleBundle(dir);
    expect(consoleBundleIsFresh(dir)).toBe(true);
    const { files: _files, ...older } = JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8'));
    writeFileSync(join(dir, 'build.json'), JSON.stringify(older));
    expect(consoleBundleIsFresh(dir)).toBe(false);
  });
});
