// Bundles the `hook` CLI into dist/ (one ES module plus lazily loaded chunks), which the
// launcher (bin/hook.js) runs whenever it is at least as new as every source file it was
// built from. Why: run from its TypeScript sources, the CLI loads Node's type stripper
// (about 20 MB) and a few hundred modules; `hook listen` has a 100 MB memory budget.
// The sources stay the truth: a stale or missing build just means running from them.
import { build } from 'esbuild';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const cliRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(cliRoot, '..', '..');
const outdir = join(cliRoot, 'dist');
const startedAtMs = Date.now();

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const result = await build({
  entryPoints: [join(cliRoot, 'src', 'main.ts')],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  metafile: true,
  absWorkingDir: cliRoot,
  logLevel: 'warning',
  // ink imports it only when DEV=true; not a dependency.
  external: ['react-devtools-core'],
  // Some bundled CommonJS modules call require(); give ES module chunks one.
  banner: { js: "import { createRequire as __hookCreateRequire } from 'node:module'; const require = __hookCreateRequire(import.meta.url);" },
});
// The workspace sources the bundle holds: the launcher compares their times with the build's.
const sources = Object.keys(result.metafile.inputs)
  .map((input) => resolve(cliRoot, input))
  .filter((file) => !file.split('/').includes('node_modules'))
  .map((file) => relative(cliRoot, file));
for (const source of sources) {
  if (statSync(join(cliRoot, source)).mtimeMs > startedAtMs) throw new Error(`${source} changed during the build; build again`);
}
writeFileSync(join(outdir, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
writeFileSync(join(outdir, 'build.json'), `${JSON.stringify({ built_at_ms: startedAtMs, sources }, null, 2)}\n`);
process.stderr.write(`hook CLI bundled into ${relative(repoRoot, outdir)}/ from ${sources.length} source files\n`);
