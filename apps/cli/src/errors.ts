/**
 * Errors the CLI raises itself, beside the relay's (which arrive as HookApiError).
 * Each has a stable code, listed in docs/cli.md (a test checks), and a fix line.
 * A `UserError` is the user's to fix: one line and the fix, no stack, exit 1. A
 * `UsageError` is a mistake in the command line: exit 2. Anything else is a bug.
 */
import type { HookApiError } from '@hook/client/errors';

export interface CliErrorDefinition {
  readonly code: string;
  readonly title: string;
  /** The usual fix; a throw site can give a more precise one. */
  readonly fix: string;
}

const registry = new Map<string, CliErrorDefinition>();

function defineCliError(code: string, title: string, fix: string): CliErrorDefinition {
  if (registry.has(code)) throw new Error(`CLI error code '${code}' is defined twice`);
  const definition = { code, title, fix };
  registry.set(code, definition);
  return definition;
}

/** Every CLI error code, in definition order. */
export function allCliErrors(): CliErrorDefinition[] {
  return [...registry.values()];
}

export const USAGE_ERROR = defineCliError('usage_error', 'Invalid command line', 'Run the command with --help to see its arguments and options.');
export const INVALID_API_URL = defineCliError(
  'invalid_api_url', 'Invalid API URL',
  'Give the relay\'s base URL with https:// (--api-url https://hooks.example.com); a relay on this machine may be just host:port (--api-url 127.0.0.1:8080).',
);
export const MALFORMED_API_KEY = defineCliError('malformed_api_key', 'Malformed API key', 'Set the key again exactly as `hook signup` or `hook members add` printed it (hk_…), without line breaks or spaces.');
export const RELAY_UNREACHABLE = defineCliError(
  'relay_unreachable', 'Relay unreachable',
  'Check that the relay is running (npm start) and that --api-url, HOOK_API_URL or the profile points at it.',
);
export const NOT_LOGGED_IN = defineCliError(
  'not_logged_in', 'Not logged in',
  'Run `hook signup` to create an account, or `hook login --api-key hk_…` with a key you have (or set HOOK_API_KEY).',
);
export const ALREADY_LOGGED_IN = defineCliError(
  'already_logged_in', 'Profile already has a key',
  'Use another profile (--profile <name>), run `hook logout` first, or pass --force to replace the saved key.',
);
export const CONFIG_INVALID = defineCliError('config_invalid', 'Unreadable config file', 'Fix the file by hand or delete it, then log in again.');
export const ENDPOINT_NOT_FOUND = defineCliError('endpoint_not_found', 'Endpoint not found', 'Run `hook endpoints list` to see your endpoints.');
export const AMBIGUOUS_ENDPOINT_NAME = defineCliError('ambiguous_endpoint_name', 'Ambiguous endpoint name', 'Use the endpoint id (ep_…) instead of the name.');
export const ENDPOINT_NOT_CHOSEN = defineCliError(
  'endpoint_not_chosen', 'Which endpoint to listen on',
  'Pass one for this run (`hook listen 3000 --endpoint <name>`), or make one the default (`hook endpoints use <name>`).',
);
export const INPUT_UNREADABLE = defineCliError('input_unreadable', 'Cannot read the input', 'Check the path after @ (or pipe the body into --data -).');
export const FIXTURE_INVALID = defineCliError(
  'fixture_invalid', 'Not a Hook fixture',
  'Save the event again with `hook events export <event> --fixture <file>`, or fix the file as docs/cli.md#fixture-files describes.',
);
export const OUTPUT_UNWRITABLE = defineCliError('output_unwritable', 'Cannot write the file', 'Check that the directory exists and that you may write there.');
export const WAIT_TIMED_OUT = defineCliError(
  'wait_timed_out', 'No matching event in time',
  'Check what arrived with `hook events list`, then wait longer (--timeout 2m) or count events from before the wait began (--since 10m, or --since <event>).',
);
export const REPLAY_FAILED = defineCliError(
  'replay_failed', 'Replay attempt failed',
  'Fix the destination (the attempt above shows what it answered), then replay the event again.',
);

/** REPLAY_FAILED's fix for one event, naming it. */
export function replayFailedFix(eventId: string): string {
  return `See the attempts with \`hook events get ${eventId}\`, fix the destination, then run \`hook events replay ${eventId}\` again.`;
}
export const TRANSFORM_TEST_FAILED = defineCliError(
  'transform_test_failed', 'Transformation failed',
  'Fix the code at the line given (the output has its console lines), then run `hook transform test` again.',
);
export const CLI_BUG = defineCliError('cli_bug', 'Internal error in hook', 'This is a bug in the hook CLI; please report it with the output above.');

/** Bad input the user can fix: shown as one line plus the fix, exit 1. */
export class UserError extends Error {
  readonly definition: CliErrorDefinition;
  readonly fix: string;
  readonly exitCode: number = 1;

  constructor(definition: CliErrorDefinition, detail: string, fix: string = definition.fix) {
    super(detail);
    this.name = 'UserError';
    this.definition = definition;
    this.fix = fix;
  }

  get code(): string {
    return this.definition.code;
  }
}

/** A mistake in the command line itself (unknown option, missing argument, bad value): exit 2. */
export class UsageError extends UserError {
  override readonly exitCode: number = 2;

  constructor(detail: string, fix: string = USAGE_ERROR.fix) {
    super(USAGE_ERROR, detail, fix);
    this.name = 'UsageError';
  }
}

/**
 * A relay error met by a command that knows a better fix than the code's general one
 * (relay-fixes.ts): `hook trigger` knows the request was its own sample, signed with a test
 * secret, so the fix is `--secret`. The problem, code and exit code stay the relay's.
 */
export class RelayErrorWithFix extends Error {
  readonly relayError: HookApiError;
  readonly fix: string;

  constructor(relayError: HookApiError, fix: string) {
    super(relayError.message);
    this.name = 'RelayErrorWithFix';
    this.relayError = relayError;
    this.fix = fix;
  }
}
