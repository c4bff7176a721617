/**
 * The console's browser bundle: apps/relay/src/console/ui/*.tsx (Preact) bundled by
 * esbuild into apps/relay/dist/console/. The relay runs from its TypeScript sources, so
 * the bundle is built by the relay's `build` script (turbo) and again when the relay
 * starts and finds it missing or older than a source it was made from, like the CLI's
 * launcher does with its own bundle (apps/cli/bin/fresh-build.js).
 *
 * Beside each script, and beside a copy of console.css, lie its brotli (.br) and gzip
 * (.gz) forms, compressed once here at the highest settings (~114 KB of script to ~32 KB)
 * rather than on each request; the relay sends whichever the browser accepts.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const RELAY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the bundle lives; the relay serves it from here. */
export const CONSOLE_BUNDLE_DIR = join(RELAY_ROOT, 'dist', 'console');
const UI_DIR = join(RELAY_ROOT, 'src', 'console', 'ui');
/** The scripts the pages load: the console itself and the inspector the playground shares. */
const ENTRY_POINTS = { console: join(UI_DIR, 'main.tsx'), inspector: join(UI_DIR, 'inspector-entry.tsx') };
/** The stylesheet, copied into the bundle so that it and its compressed forms are built (and go stale) together. */
const STYLESHEET = join(RELAY_ROOT, 'src', 'console', 'console.css');
/** The bundle's files the relay serves, each with a .br and a .gz beside it. */
export const CONSOLE_BUNDLE_FILES = ['console.js', 'inspector.js', 'console.css'] as const;
/** The compressed forms, by the content-encoding each is sent with. */
export const COMPRESSED_FORMS = [{ encoding: 'br', suffix: '.br' }, { encoding: 'gzip', suffix: '.gz' }] as const;

interface BuildInfo { built_at_ms: number; sources: string[]; files: string[] }

/**
 * Whether the bundle exists, has every file the relay serves (a bundle from before
 * the compressed forms has not), and is at least as new as every source it was built from.
 */
export function consoleBundleIsFresh(dir = CONSOLE_BUNDLE_DIR): boolean {
  try {
    const info = JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8')) as BuildInfo;
    const expected = CONSOLE_BUNDLE_FILES.flatMap((file) => [file, ...COMPRESSED_FORMS.map((form) => file + form.suffix)]);
    return expected.every((file) => info.files.includes(file) && existsSync(join(dir, file)))
      && info.sources.every((source) => statSync(join(RELAY_ROOT, source)).mtimeMs <= info.built_at_ms);
  } catch {
    return false;
  }
}

/** Writes `file`'s brotli and gzip forms beside it; returns their names. */
async function compressBeside(dir: string, file: string): Promise<string[]> {
  const content = readFileSync(join(dir, file));
  const [brotli, gzipped] = await Promise.all([
    promisify(brotliCompress)(content, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: content.length, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } }),
    promisify(gzip)(content, { level: constants.Z_BEST_COMPRESSION }),
  ]);
  writeFileSync(join(dir, `${file}.br`), brotli);
  writeFileSync(join(dir, `${file}.gz`), gzipped);
  return [`${file}.br`, `${file}.gz`];
}

/**
 * Bundles the console into a directory of its own and renames it into place, so a relay
 * starting meanwhile (tests start several at once) never serves half a bundle.
 */
export async function buildConsoleBundle(dir = CONSOLE_BUNDLE_DIR): Promise<void> {
  const { build } = await import('esbuild');
  const startedAtMs = Date.now();
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}-partial-`);
  chmodSync(staging, 0o755);
  try {
    const result = await build({
      entryPoints: ENTRY_POINTS,
      outdir: staging,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      jsx: 'automatic',
      jsxImportSource: 'preact',
      metafile: true,
      absWorkingDir: RELAY_ROOT,
      logLevel: 'warning',
    });
    const sources = Object.keys(result.metafile.inputs)
      .map((input) => resolve(RELAY_ROOT, input))
      .filter((file) => !file.split('/').includes('node_modules'))
      .map((file) => relative(RELAY_ROOT, file));
    sources.push(relative(RELAY_ROOT, STYLESHEET));
    copyFileSync(STYLESHEET, join(staging, 'console.css'));
    const compressed = (await Promise.all(CONSOLE_BUNDLE_FILES.map((file) => compressBeside(staging, file)))).flat();
    const files = [...CONSOLE_BUNDLE_FILES, ...compressed];
    writeFileSync(join(staging, 'build.json'), `${JSON.stringify({ built_at_ms: startedAtMs, sources, files } satisfies BuildInfo, null, 2)}\n`);
    rmSync(`${dir}-old`, { recursive: true, force: true });
    try {
      renameSync(dir, `${dir}-old`);
    } catch { /* no bundle yet */ }
    renameSync(staging, dir);
    rmSync(`${dir}-old`, { recursive: true, force: true });
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!consoleBundleIsFresh(dir)) throw error; // another process built it first: use theirs
  }
}

/** Builds the bundle when it is missing or stale; the relay calls it before serving /console. */
export async function ensureConsoleBundle(dir = CONSOLE_BUNDLE_DIR): Promise<void> {
  if (!consoleBundleIsFresh(dir)) await buildConsoleBundle(dir);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsoleBundle();
  process.stderr.write(`console bundled into ${relative(process.cwd(), CONSOLE_BUNDLE_DIR)}/\n`);
}
