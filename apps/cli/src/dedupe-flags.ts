/** Dedupe from flags (docs/sources.md, Duplicates): shared by `hook endpoints create` and `hook endpoints update`. */
import { InvalidArgumentError, type Command } from 'commander';
import { DEDUPE_FIELD_PATTERN, DEDUPE_HEADER_PATTERN, DEDUPE_SOURCE_MAX_CHARS, describeDedupe } from '@hook/core';
import type { EndpointDedupe } from '@hook/client';
import { UsageError } from './errors.ts';

export interface DedupeFlags {
  dedupeHeader?: string;
  dedupeField?: string;
  /** false from `--no-dedupe` (commander makes it true when the flag is absent). */
  dedupe?: boolean;
}

const HEADER = new RegExp(DEDUPE_HEADER_PATTERN);
const FIELD = new RegExp(DEDUPE_FIELD_PATTERN);

function parseDedupeHeader(value: string): string {
  const name = value.trim();
  if (name.length === 0 || name.length > DEDUPE_SOURCE_MAX_CHARS || !HEADER.test(name)) {
    throw new InvalidArgumentError(`must be a header name (at most ${DEDUPE_SOURCE_MAX_CHARS} characters, no spaces or colons), e.g. X-GitHub-Delivery, webhook-id or Idempotency-Key.`);
  }
  return name;
}

function parseDedupeField(value: string): string {
  const path = value.trim();
  if (path.length === 0 || path.length > DEDUPE_SOURCE_MAX_CHARS || !FIELD.test(path)) {
    throw new InvalidArgumentError(
      `must be a field of the JSON body, dotted for a nested one (at most 8 names of letters, digits, _ or -; ${DEDUPE_SOURCE_MAX_CHARS} characters), e.g. id or data.object.id.`,
    );
  }
  return path;
}

/** Adds the --dedupe flags; `clearable` adds --no-dedupe (update). */
export function addDedupeOptions(command: Command, clearable: boolean): Command {
  command
    .option('--dedupe-header <name>', 'drop duplicates: a request whose value of this header was already stored is answered with the original event and not stored again (docs/sources.md)', parseDedupeHeader)
    .option('--dedupe-field <path>', 'drop duplicates keyed by this field of a JSON body, dotted for a nested one (e.g. id for Stripe)', parseDedupeField);
  if (clearable) command.option('--no-dedupe', 'store every request again, duplicates included');
  return command;
}

/** The `dedupe` field the flags give (null turns it off), or undefined when none was given. */
export function dedupeFromFlags(flags: DedupeFlags): EndpointDedupe | null | undefined {
  if (flags.dedupeHeader !== undefined && flags.dedupeField !== undefined) {
    throw new UsageError(
      '--dedupe-header and --dedupe-field can\'t be used together',
      'An endpoint takes its key from one place: give --dedupe-header <name> for a header (X-GitHub-Delivery) or --dedupe-field <path> for a JSON field (id).',
    );
  }
  const set = flags.dedupeHeader !== undefined ? '--dedupe-header' : flags.dedupeField !== undefined ? '--dedupe-field' : null;
  if (flags.dedupe === false) {
    if (set) throw new UsageError(`--no-dedupe can't be used with ${set}`, `Either turn dedupe off with --no-dedupe, or set where the key is with ${set} alone.`);
    return null;
  }
  if (flags.dedupeHeader !== undefined) return { header: flags.dedupeHeader };
  if (flags.dedupeField !== undefined) return { json_field: flags.dedupeField };
  return undefined;
}

/** How an endpoint's dedupe reads in `hook endpoints get`: `header x-github-delivery`, `JSON field id`, `off`. */
export function dedupeText(dedupe: EndpointDedupe | null): string {
  return dedupe ? describeDedupe(dedupe) : 'off';
}
