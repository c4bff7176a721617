/**
 * Every way a run can fail, as one problem document (RFC 9457 shape, like the relay's)
 * and an exit code: the relay's own problem for API errors; a problem with a CLI code
 * (docs/cli.md) for local ones; a bug report for anything unexpected.
 */
import { HookApiError, HookNetworkError } from '@hook/client/errors';
import type { Problem } from '@hook/client';
import { CLI_BUG, RELAY_UNREACHABLE, UserError, type CliErrorDefinition } from '../errors.ts';

/** A problem document from the CLI itself: no HTTP status or request id. */
export type CliProblem = Omit<Problem, 'status' | 'request_id'> & { status?: number; request_id?: string; url?: string; stack?: string };

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

export function describeFailure(error: unknown): Failure {
  if (error instanceof UserError) {
    return { problem: localProblem(error.definition, error.message, error.fix), exitCode: error.exitCode, fromRelay: false };
  }
  if (error instanceof HookApiError) {
    return { problem: error.problem, exitCode: 1, fromRelay: true };
  }
  if (error instanceof HookNetworkError) {
    return {
      problem: localProblem(RELAY_UNREACHABLE, `Cannot reach the Hook relay at ${error.url} (${error.reason})`, RELAY_UNREACHABLE.fix, { url: error.url }),
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
