import type { FieldError, Problem } from './api-types.ts';

/**
 * The relay answered with an error: its problem+json document, whole. A response that
 * is not problem+json (a proxy's HTML 502, say) becomes a problem with code
 * `unexpected_response`, so callers handle one shape.
 */
export class HookApiError extends Error {
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
    this.name = 'HookApiError';
    this.problem = problem;
  }

  get status(): number {
    return this.problem.status;
  }

  get code(): string {
    return this.problem.code;
  }

  get title(): string {
    return this.problem.title;
  }

  get detail(): string {
    return this.problem.detail;
  }

  get fix(): string {
    return this.problem.fix;
  }

  get errors(): readonly FieldError[] {
    return this.problem.errors ?? [];
  }

  get requestId(): string {
    return this.problem.request_id;
  }
}

/** Why no answer came. */
export type NetworkFailure = 'refused' | 'not_found' | 'timeout' | 'reset' | 'other';

/**
 * No HTTP answer at all: the relay is down, the host does not resolve, the connection
 * dropped or timed out. Distinct from `HookApiError` so callers can tell "the relay said
 * no" from "nothing is there"; the message names the URL.
 */
export class HookNetworkError extends Error {
  /** The base URL (or ingest URL) that could not be reached. */
  readonly url: string;
  readonly failure: NetworkFailure;
  /** What happened, in words: "connection refused: nothing is listening there". */
  readonly reason: string;

  constructor(url: string, failure: NetworkFailure, reason: string, options: { cause?: unknown } = {}) {
    super(`Cannot reach ${url} (${reason})`, options);
    this.name = 'HookNetworkError';
    this.url = url;
    this.failure = failure;
    this.reason = reason;
  }
}

const SYSTEM_ERROR_FAILURES: Record<string, [NetworkFailure, string]> = {
  ECONNREFUSED: ['refused', 'connection refused: nothing is listening there'],
  ENOTFOUND: ['not_found', 'the host name does not resolve'],
  EAI_AGAIN: ['not_found', 'the host name could not be resolved right now'],
  ECONNRESET: ['reset', 'the connection was reset'],
  EPIPE: ['reset', 'the connection was closed while sending'],
  EHOSTUNREACH: ['other', 'the host is unreachable'],
  ENETUNREACH: ['other', 'the network is unreachable'],
  UND_ERR_CONNECT_TIMEOUT: ['timeout', 'no connection within the connect timeout'],
  UND_ERR_HEADERS_TIMEOUT: ['timeout', 'no answer within the response timeout'],
  UND_ERR_BODY_TIMEOUT: ['timeout', 'the answer stopped arriving'],
  UND_ERR_SOCKET: ['reset', 'the other side closed the connection'],
  UND_ERR_CLOSED: ['reset', 'the connection was closed'],
};

/** The network failure behind an undici or system error, or undefined when it is something else (a bug). */
export function networkFailureOf(error: unknown): [NetworkFailure, string] | undefined {
  for (let current = error as { code?: unknown; cause?: unknown; errors?: unknown } | undefined, depth = 0; current && depth < 5; depth++) {
    if (typeof current.code === 'string' && SYSTEM_ERROR_FAILURES[current.code]) return SYSTEM_ERROR_FAILURES[current.code];
    // A host with several addresses fails with an AggregateError of per-address errors.
    if (Array.isArray(current.errors) && current.errors.length > 0) {
      const inner = networkFailureOf(current.errors[0]);
      if (inner) return inner;
    }
    current = current.cause as typeof current;
  }
  return undefined;
}
