/** A custom response from flags (docs/sources.md, Custom responses): shared by `hook endpoints create` and `hook endpoints update`. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { EndpointResponse, EndpointResponseInput } from '@hook/client';
import { readOptionFile } from './endpoint-rules.ts';
import { UsageError } from './errors.ts';
import { collectHeader } from './option-parsers.ts';

export interface ResponseFlags {
  responseStatus?: number;
  responseHeader?: Array<[string, string]>;
  responseBodyFile?: string;
  clearResponse?: boolean;
}

function parseResponseStatus(value: string): number {
  const status = Number(value);
  if (!/^\d{3}$/.test(value) || status < 200 || status > 299) throw new InvalidArgumentError('must be a status from 200 to 299 (a custom response still tells the sender its request was taken), e.g. 202.');
  return status;
}

/** Adds the --response-… flags; `clearable` adds --clear-response (update). */
export function addResponseOptions(command: Command, clearable: boolean): Command {
  command
    .option('--response-status <code>', 'answer each stored request with this status, 200–299 (default 200; docs/sources.md)', parseResponseStatus)
    .option('--response-header <header>', 'a header of that answer, \'Name: value\' (repeatable): Content-Type text/plain, application/json, application/xml or text/xml; Cache-Control, ETag and the others docs/sources.md lists; X-… names', collectHeader)
    .option('--response-body-file <path>', 'the answer\'s body, read from this file (at most 4096 bytes; {{event_id}} becomes the event id)');
  if (clearable) command.addOption(new Option('--clear-response', 'answer with the default {"id","status"} JSON again').conflicts(['responseStatus', 'responseHeader', 'responseBodyFile']));
  return command;
}

/**
 * The `response` field the flags give (null clears it), or undefined when none was given.
 * The flags given make the whole response: what is left out takes its default.
 */
export async function responseFromFlags(flags: ResponseFlags): Promise<EndpointResponseInput | null | undefined> {
  if (flags.clearResponse) return null;
  if (flags.responseStatus === undefined && flags.responseHeader === undefined && flags.responseBodyFile === undefined) return undefined;
  const response: EndpointResponseInput = {};
  if (flags.responseStatus !== undefined) response.status = flags.responseStatus;
  if (flags.responseHeader !== undefined) {
    const headers: Record<string, string> = {};
    for (const [name, value] of flags.responseHeader) {
      if (Object.keys(headers).some((known) => known.toLowerCase() === name.toLowerCase())) {
        throw new UsageError(`--response-header ${name} is given twice`, 'Give each header once.');
      }
      headers[name] = value;
    }
    response.headers = headers;
  }
  if (flags.responseBodyFile !== undefined) response.body = await readOptionFile(flags.responseBodyFile, '--response-body-file');
  return response;
}

/** How an endpoint's custom response reads in `hook endpoints get`. */
export function responseText(response: EndpointResponse | null): string {
  if (!response) return 'default ({"id","status"} JSON)';
  const headers = Object.keys(response.headers).sort();
  return `${response.status}${headers.length > 0 ? `, ${headers.join(', ')}` : ''}, ${Buffer.byteLength(response.body, 'utf8')} bytes of body`;
}
