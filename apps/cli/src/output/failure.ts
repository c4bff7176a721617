/**
 * Every way a run can fail, as one problem document (RFC 9457 shape, like the relay's)
 * and an exit code: the relay's own problem for API errors, with its fix in `hook` words
 * (relay-fixes.ts); a problem with a CLI code (docs/cli.md) for local ones; a bug report
 * for anything unexpected.
 */
import { HookApiError, HookNetworkError } from '@hook/client/errors';
import type { Problem } from '@hook/client';
import { CLI_BUG, RELAY_UNREACHABLE, RelayErrorWithFix, UserError, type CliErrorDefinition } from '../errors.ts';
import { cliFixFor, type FixContext } from '../relay-fixes.ts';
import type { SettingSource } from '../settings.ts';

export type { FixContext } from '../relay-fixes.ts';

/** A problem document from the CLI itself: no HTTP status or request id. */
export type CliProblem = Omit<Problem, 'status' | 'request_id'> & {
  status?: number;
  request_id?: string;
  url?: string;
  stack?: string;
  /** invalid_api_key: where the refused key came from (`flag`: --api-key, `env`: HOOK_API_KEY, `profile`). */
  api_key_source?: SettingSource;
};

export interface Failure {
  problem: CliProblem;
  exitCode: number;
  /** The problem came from the relay (its code is shown beside the message). */
  fromRelay: boolean;
  /** For bugs: the stack, shown to people so they can report it. */
  stack?: string;
}

function localProblem(definition: CliErrorDefinition, detail: string, fix: string, extra: { url?: string; stack?: string } = {}): CliProblem {
  return { type: `urn:hook:cli:${definition.code}`, title: definition.title, detail, code: definition.code, fix, ...extra };
}

/** Where to change the relay URL, when the URL that failed is the one the run was given. */
function unreachableFix(error: HookNetworkError, context: FixContext | undefined): string {
  const url = context?.apiUrl;
  if (!url || !error.url.startsWith(url.value)) return RELAY_UNREACHABLE.fix;
  const start = `Check that the relay is running (npm start runs one at http://127.0.0.1:8080)`;
  switch (url.source) {
    case 'flag':
      return `${start} and that --api-url points at it.`;
    case 'env':
      return `${start} and that HOOK_API_URL, which overrides the profile, points at it (unset it to use profile '${context!.profile}').`;
    case 'profile':
      return `${start} and that the URL saved in profile '${context!.profile}' (${context!.configPath}) points at it; --api-url uses another for one command.`;
    case 'default':
      return `${start}; for a relay elsewhere, pass --api-url or set HOOK_API_URL.`;
  }
}

/**
 * The problem document and exit code for whatever ended a run. `context` (the run's
 * profile, URL and key sources) makes the fixes point at where a setting came from.
 */
export function describeFailure(error: unknown, context?: FixContext): Failure {
  if (error instanceof UserError) {
    return { problem: localProblem(error.definition, error.message, error.fix), exitCode: error.exitCode, fromRelay: false };
  }
  if (error instanceof RelayErrorWithFix) {
    const failure = describeFailure(error.relayError, context);
    return { ...failure, problem: { ...failure.problem, fix: error.fix } };
  }
  if (error instanceof HookApiError) {
    const fixContext = context ?? { profile: 'default', configPath: 'the config file' };
    const problem: CliProblem = { ...error.problem, fix: cliFixFor(error.problem, fixContext) };
    if (error.code === 'invalid_api_key' && context?.apiKey) problem.api_key_source = context.apiKey.source;
    return { problem, exitCode: 1, fromRelay: true };
  }
  if (error instanceof HookNetworkError) {
    return {
      problem: localProblem(RELAY_UNREACHABLE, `Cannot reach the Hook relay at ${error.url} (${error.reason})`, unreachableFix(error, context), { url: error.url }),
      exitCode: 1,
      fromRelay: false,
    };
  }
  const bug = error instanceof Error ? error : new Error(String(error));
  return {
    problem: localProblem(CLI_BUG, bug.message, CLI_BUG.fix, { stack: bug.stack }),
    exitCode: 1,
    fromRelay: false,
    stack: bug.stack?.split('\n').slice(1).join('\n'),
  };
}
