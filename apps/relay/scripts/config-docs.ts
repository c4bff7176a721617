/**
 * Writes docs/configuration.md's variable tables from the declarations in
 * apps/relay/src/config.ts and tracing-config.ts. `--check` only says whether they differ
 * (exit code 1), as apps/relay/test/config.test.ts does.
 *
 *   node apps/relay/scripts/config-docs.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_DOC, REGENERATE_CONFIG_DOC, withGeneratedTables } from '../src/config-docs.ts';

const current = readFileSync(CONFIG_DOC, 'utf8');
const generated = withGeneratedTables(current);
if (generated === current) {
  process.stdout.write('docs/configuration.md: the tables match the declarations\n');
} else if (process.argv.includes('--check')) {
  process.stderr.write(`docs/configuration.md: the tables differ from the declarations; run ${REGENERATE_CONFIG_DOC}\n`);
  process.exitCode = 1;
} else {
  writeFileSync(CONFIG_DOC, generated);
  process.stdout.write('docs/configuration.md: tables rewritten from the declarations\n');
}
