/** Reading a transformation and filter from flags: shared by `hook endpoints create|update` and `hook destinations add|update`. */
import { readFile } from 'node:fs/promises';
import { UsageError } from './errors.ts';

/** The text of a file named by a flag; a usage error (exit 2) when it cannot be read. */
export async function readOptionFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, `Check the path given to ${flag}.`);
  }
}

/** A filter given as JSON text (docs/filters.md); a usage error (exit 2) unless it is a JSON object. */
export function parseFilter(text: string, flag: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON: ${(error as Error).message}`, 'Write the filter as a JSON object, e.g. \'{"body":{"type":"order.created"}}\' (docs/filters.md).');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${flag} must be a JSON object with any of body, headers, query, path`, 'See docs/filters.md for the syntax.');
  }
  return parsed as Record<string, unknown>;
}

/** The flags that set or clear a transformation and a filter (the clearing ones only where a command has them). */
export interface RuleFlags {
  transformationFile?: string;
  clearTransformation?: boolean;
  filterFile?: string;
  filter?: string;
  clearFilter?: boolean;
}

/** The `transformation` and `filter` fields the flags give (`null` clears one); fields not given are left out. */
export async function rulesFromFlags(flags: RuleFlags): Promise<{ transformation?: { code: string } | null; filter?: Record<string, unknown> | null }> {
  const rules: { transformation?: { code: string } | null; filter?: Record<string, unknown> | null } = {};
  if (flags.transformationFile !== undefined) rules.transformation = { code: await readOptionFile(flags.transformationFile, '--transformation-file') };
  if (flags.clearTransformation) rules.transformation = null;
  if (flags.filterFile !== undefined) rules.filter = parseFilter(await readOptionFile(flags.filterFile, '--filter-file'), '--filter-file');
  if (flags.filter !== undefined) rules.filter = parseFilter(flags.filter, '--filter');
  if (flags.clearFilter) rules.filter = null;
  return rules;
}
