/**
 * docs/configuration.md's variable tables, made from the declarations (config.ts,
 * tracing-config.ts). Each `section` is the `## ` heading of the document whose first table
 * is that section's; the prose around the tables is the document's own.
 * `node apps/relay/scripts/config-docs.ts` rewrites them; config.test.ts fails when they differ.
 */
import { RELAY_VARIABLES } from './config.ts';
import { variableNames, type Variable } from './env-variables.ts';
import { TRACING_VARIABLES } from './tracing-config.ts';

export const CONFIG_DOC = new URL('../../../docs/configuration.md', import.meta.url);
export const REGENERATE_CONFIG_DOC = 'node apps/relay/scripts/config-docs.ts';

/** Every variable the relay reads, in the docs' order. */
export const DOCUMENTED_VARIABLES: readonly Variable<unknown>[] = [...Object.values(RELAY_VARIABLES), ...TRACING_VARIABLES];

function cell(markdown: string, variable: string): string {
  if (/[|\n]/.test(markdown)) throw new Error(`${variable}: a table cell cannot hold "|" or a line break`);
  return markdown;
}

/** The table of one section, header included. */
export function variableTable(variables: readonly Variable<unknown>[]): string {
  const rows = variables.map((declaration) => {
    const names = variableNames(declaration);
    const name = names.map((each) => `\`${each}\``).join(', ');
    return `| ${name} | ${[declaration.format, declaration.defaultText, declaration.doc].map((text) => cell(text, names[0] ?? '')).join(' | ')} |`;
  });
  return ['| Variable | Type | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** `markdown` (docs/configuration.md) with each section's first table replaced by the one the declarations make. */
export function withGeneratedTables(markdown: string, variables: readonly Variable<unknown>[] = DOCUMENTED_VARIABLES): string {
  const sections = [...new Set(variables.map((declaration) => declaration.section))];
  const lines = markdown.split('\n');
  for (const section of sections) {
    const heading = lines.indexOf(`## ${section}`);
    if (heading === -1) throw new Error(`docs/configuration.md has no "## ${section}" heading for its table`);
    const start = lines.findIndex((line, index) => index > heading && line.startsWith('|'));
    const next = lines.findIndex((line, index) => index > heading && line.startsWith('## '));
    if (start === -1 || (next !== -1 && start > next)) throw new Error(`docs/configuration.md's "## ${section}" has no table`);
    let end = start;
    while (lines[end + 1]?.startsWith('|')) end++;
    lines.splice(start, end - start + 1, variableTable(variables.filter((declaration) => declaration.section === section)));
  }
  return lines.join('\n');
}
