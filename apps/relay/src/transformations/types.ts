/**
 * The contract between the sandbox that runs endpoint transformations (runner.ts) and
 * its callers (the delivery path, the listen session, POST /v1/transformations/test).
 * See docs/transformations.md.
 */

/** What a transformation receives as `request`, and returns. `body` is parsed when the content is JSON, else a string. */
export interface TransformRequest {
  method: string;
  path: string;
  /** The query string without `?` ('' when none). */
  query: string;
  headers: Record<string, string>;
  body: unknown;
}

/** What a transformation receives as `context`. */
export interface TransformContext {
  event_id: string;
  /** The event's type, or null. */
  type: string | null;
  endpoint: { id: string; name: string };
}

/** One captured `console.*` call. */
export interface TransformLog {
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  message: string;
}

export interface TransformError {
  /** e.g. `TypeError: x is undefined`, `Transformation ran longer than 100 ms`, `Transformation used more than 16 MiB`. */
  message: string;
  /** 1-based line in the user's code, when known. */
  line: number | null;
}

export type TransformOutcome =
  | { ok: true; request: TransformRequest; /** A new event type the code set, else undefined. */ type?: string | null; logs: TransformLog[] }
  | { ok: false; error: TransformError; logs: TransformLog[] };

export interface TransformLimits {
  /** CPU time per run (default 100 ms, HOOK_TRANSFORM_TIMEOUT). */
  timeoutMs: number;
  /** Memory per sandbox (default 16 MiB, HOOK_TRANSFORM_MEMORY). */
  memoryBytes: number;
}

/** Runs user code in a sandbox. One instance per relay process (a pool of runtimes inside). */
export interface TransformRunner {
  /** Compiles `code` and reports a syntax error or a missing `addHandler('transform', …)` without running a request. */
  check(code: string, accountId?: string): Promise<TransformError | null>;
  /** `accountId`: whose CPU it is (the pool meters it and keeps accounts' shares fair). */
  run(code: string, request: TransformRequest, context: TransformContext, accountId?: string): Promise<TransformOutcome>;
  close(): Promise<void>;
}
