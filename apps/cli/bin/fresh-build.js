// Whether the bundle in dist/ may run: plain JavaScript, loaded by the launcher (bin/hook.js).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * dist/main.js under `cliRoot` when the build (dist/build.json, written by
 * scripts/build.mjs) is at least as new as every source file it was made from; undefined
 * when there is no build, a source file changed since, or one is gone.
 */
export function freshBuild(cliRoot) {
  try {
    const info = JSON.parse(readFileSync(join(cliRoot, 'dist', 'build.json'), 'utf8'));
    for (const source of info.sources) {
      if (statSync(join(cliRoot, source)).mtimeMs > info.built_at_ms) return undefined;
    }
    return join(cliRoot, 'dist', 'main.js');
  } catch {
    return undefined;
  }
}
