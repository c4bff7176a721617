/**
 * The sandbox that runs endpoint transformations: QuickJS compiled to WebAssembly
 * (quickjs-emscripten), never node:vm. See docs/transformations.md.
 *
 * - Nothing of the host is handed in: the only globals beyond the language are `addHandler`
 *   and `console`, both written in JavaScript inside the VM. Request and context go in as
 *   a JSON string parsed inside the VM; the result comes out as a JSON string.
 * - Limits: a deadline checked by QuickJS's interrupt handler (CPU time: a run is
 *   synchronous), a per-runtime allocation limit and stack size, and one WebAssembly
 *   memory of fixed maximum size for the whole pool, so no code can grow the host's memory
 *   past it (quickjs-emscripten's setMemoryLimit alone bounds single allocations, not a
 *   runtime's total: justjake/quickjs-emscripten#271).
 * - Pool: per code hash, a runtime whose context has already evaluated the code (LRU).
 *   A run that times out or runs out of memory disposes its runtime.
 */
import { createHash } from 'node:crypto';
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten';
import type { TransformContext, TransformError, TransformLimits, TransformLog, TransformOutcome, TransformRequest, TransformRunner } from './types.ts';

/** The file name user code is evaluated under: stack frames read `user.js:LINE:COLUMN`. */
const USER_FILENAME = 'user.js';
/** QuickJS's own stack limit. Wasm frames also use the host's native stack, so it stays well below Node's (~1 MB). */
const MAX_STACK_BYTES = 256 * 1024;
/** Largest result (the returned request as JSON) in bytes. */
export const MAX_RESULT_BYTES = 1024 * 1024;
export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_BYTES = 1024;
/** Compiled codes kept ready (runtime + context with the handler registered). */
export const DEFAULT_MAX_CACHED_SANDBOXES = 64;
const WASM_PAGE_BYTES = 64 * 1024;
/** The engine's own start-up memory (the prebuilt module's INITIAL_MEMORY): its stack and static data. */
const WASM_INITIAL_BYTES = 16 * 1024 * 1024;

export interface TransformRunnerOptions extends TransformLimits {
  /** Sandboxes (one per distinct code) kept warm. Default 64. */
  maxCachedSandboxes?: number;
  /** The WebAssembly memory all sandboxes share, in bytes. Default 16 MiB + 4 × memoryBytes. */
  poolMemoryBytes?: number;
}

/** Runs inside each VM before the user's code. Returns `[run, collect]`; keeps handlers and logs in a closure user code cannot reach. */
const PRELUDE = String.raw`(() => {
  const parse = JSON.parse, stringify = JSON.stringify, MAX_LINES = ${MAX_LOG_LINES}, MAX_LINE = ${MAX_LOG_LINE_BYTES};
  const handlers = Object.create(null);
  let logs = [], dropped = 0, newType, settled;
  const format = (value) => {
    if (typeof value === 'string') return value;
    try { const text = stringify(value); return text === undefined ? String(value) : text; } catch { return String(value); }
  };
  const capture = (level) => (...args) => {
    if (logs.length >= MAX_LINES) { dropped++; return; }
    let message = args.map(format).join(' ');
    if (message.length > MAX_LINE) message = message.slice(0, MAX_LINE) + '…';
    logs.push({ level, message });
  };
  globalThis.console = { log: capture('log'), info: capture('info'), warn: capture('warn'), error: capture('error'), debug: capture('debug') };
  globalThis.addHandler = (name, handler) => {
    if (name !== 'transform') throw new TypeError("addHandler: the only handler is 'transform'");
    if (typeof handler !== 'function') throw new TypeError('addHandler: the handler must be a function');
    handlers.transform = handler;
  };
  const describe = (error) => {
    if (error instanceof Error) return { name: String(error.name), message: String(error.message), stack: String(error.stack ?? '') };
    return { name: null, message: typeof error === 'string' ? stringify(error) : format(error), stack: '' };
  };
  const finish = (outcome) => {
    if (dropped > 0) logs.push({ level: 'warn', message: dropped + ' more console lines were dropped (at most ' + MAX_LINES + ')' });
    return stringify({ ...outcome, logs, type: newType });
  };
  const done = (result) => {
    if (result === undefined || result === null || typeof result !== 'object') {
      return finish({ error: { name: 'TypeError', message: 'The transform handler returned ' + (result === null ? 'null' : typeof result) + '; return the request (changed or not)', stack: '' } });
    }
    return finish({ request: result });
  };
  const run = (input) => {
    logs = []; dropped = 0; newType = undefined; settled = undefined;
    const handler = handlers.transform;
    if (!handler) return finish({ error: { name: 'Error', message: "The code never called addHandler('transform', (request, context) => request)", stack: '' } });
    const { request, context } = parse(input);
    context.setType = (type) => {
      if (type !== null && (typeof type !== 'string' || type.length === 0 || type.length > 255)) throw new TypeError('setType: the type must be a non-empty string of at most 255 characters, or null');
      newType = type;
    };
    let result;
    try { result = handler(request, context); } catch (error) { return finish({ error: describe(error) }); }
    if (result && typeof result.then === 'function') {
      result.then((value) => { settled = { value }; }, (error) => { settled = { error }; });
      return undefined; // the host runs pending jobs, then calls collect
    }
    return done(result);
  };
  const collect = () => {
    if (!settled) return finish({ error: { name: 'Error', message: 'The promise the transform handler returned never settled', stack: '' } });
    if ('error' in settled) return finish({ error: describe(settled.error) });
    return done(settled.value);
  };
  const registered = () => typeof handlers.transform === 'function';
  return [run, collect, registered];
})()`;

interface Sandbox {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  run: QuickJSHandle;
  collect: QuickJSHandle;
  /** performance.now() after which the interrupt handler stops the VM. */
  deadline: number;
}

interface VmError {
  name: string | null;
  message: string;
  stack: string;
}

interface VmResult {
  request?: unknown;
  error?: VmError;
  logs: TransformLog[];
  type?: string | null;
}

/** Why a sandbox must go: its state can no longer be trusted. */
class SandboxFailure {
  readonly error: TransformError;
  readonly logs: TransformLog[];
  constructor(error: TransformError, logs: TransformLog[] = []) {
    this.error = error;
    this.logs = logs;
  }
}

/** `user.js:12:5` in a stack → 12; the first frame in the user's code. */
export function lineFromStack(stack: string): number | null {
  const match = /user\.js:(\d+)/.exec(stack);
  return match ? Number(match[1]) : null;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const METHOD = /^[A-Za-z]+$/;

/** Checks the shape the handler returned and makes a host-side copy of it. */
function toRequest(value: unknown): TransformRequest | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'The transform handler must return an object such as the request it was given';
  const result = value as Record<string, unknown>;
  const method: unknown = result.method ?? 'POST';
  if (typeof method !== 'string' || !METHOD.test(method)) return 'request.method must be an HTTP method such as POST';
  const path: unknown = result.path ?? '';
  if (typeof path !== 'string' || !(path === '' || path.startsWith('/'))) return "request.path must be '' or a string starting with '/'";
  const query: unknown = result.query ?? '';
  if (typeof query !== 'string') return "request.query must be a string such as 'a=1&b=2'";
  const headers: unknown = result.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return 'request.headers must be an object of strings';
  const entries: [string, string][] = [];
  for (const [name, headerValue] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) return `request.headers: '${name.slice(0, 100)}' is not a valid header name`;
    if (typeof headerValue !== 'string' && typeof headerValue !== 'number') return `request.headers['${name}'] must be a string`;
    if (/[\r\n\0]/.test(String(headerValue))) return `request.headers['${name}'] contains a line break or NUL`;
    entries.push([name, String(headerValue)]);
  }
  // Object.fromEntries defines own properties: a `__proto__` header name stays a plain key.
  return { method: method.toUpperCase(), path, query: query.replace(/^\?/, ''), headers: Object.fromEntries(entries), body: result.body };
}

/** Loads the QuickJS WebAssembly module with a memory that cannot grow past poolMemoryBytes. */
async function loadModule(poolMemoryBytes: number): Promise<QuickJSWASMModule> {
  const initial = WASM_INITIAL_BYTES / WASM_PAGE_BYTES;
  const maximum = Math.max(initial + 1, Math.ceil(poolMemoryBytes / WASM_PAGE_BYTES));
  // The relay's tsconfig has no DOM lib, where the WebAssembly types live.
  const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => unknown } }).WebAssembly;
  const memory = new Memory({ initial, maximum });
  return newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory as never }));
}

export class QuickJsTransformRunner implements TransformRunner {
  private module: QuickJSWASMModule | undefined;
  private loading: Promise<QuickJSWASMModule> | undefined;
  /** Insertion order is recency: a hit is deleted and set again. */
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly maxCached: number;
  private readonly poolMemoryBytes: number;
  private closed = false;
  private readonly limits: TransformLimits;

  constructor(limits: TransformLimits, options: { maxCachedSandboxes?: number; poolMemoryBytes?: number } = {}) {
    this.limits = limits;
    this.maxCached = options.maxCachedSandboxes ?? DEFAULT_MAX_CACHED_SANDBOXES;
    this.poolMemoryBytes = options.poolMemoryBytes ?? WASM_INITIAL_BYTES + 4 * limits.memoryBytes;
  }

  /** Sandboxes currently cached (for tests and benchmarks). */
  get cachedSandboxes(): number {
    return this.sandboxes.size;
  }

  async check(code: string): Promise<TransformError | null> {
    try {
      await this.sandboxFor(code);
      return null;
    } catch (error) {
      if (error instanceof SandboxFailure) return error.error;
      return { message: `Sandbox error: ${(error as Error).message}`, line: null };
    }
  }

  async run(code: string, request: TransformRequest, context: TransformContext): Promise<TransformOutcome> {
    let sandbox: Sandbox;
    try {
      sandbox = await this.sandboxFor(code);
    } catch (error) {
      if (error instanceof SandboxFailure) return { ok: false, error: error.error, logs: error.logs };
      return { ok: false, error: { message: `Sandbox error: ${(error as Error).message}`, line: null }, logs: [] };
    }
    const key = hashCode(code);
    try {
      const result = this.call(sandbox, JSON.stringify({ request, context: { event_id: context.event_id, type: context.type, endpoint: { id: context.endpoint.id, name: context.endpoint.name } } }));
      if (result.error) return { ok: false, error: this.errorOf(result.error), logs: result.logs };
      const text = JSON.stringify(result.request);
      if (Buffer.byteLength(text ?? '') > MAX_RESULT_BYTES) {
        return { ok: false, error: { message: `The transformed request is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MiB`, line: null }, logs: result.logs };
      }
      const transformed = toRequest(result.request);
      if (typeof transformed === 'string') return { ok: false, error: { message: transformed, line: null }, logs: result.logs };
      return { ok: true, request: transformed, ...(result.type !== undefined ? { type: result.type } : {}), logs: result.logs };
    } catch (error) {
      this.discard(key);
      if (error instanceof SandboxFailure) return { ok: false, error: error.error, logs: error.logs };
      // The WebAssembly itself failed (e.g. the host's stack ran out inside it): its state is
      // unknown, so the whole module goes and the next run loads a fresh one.
      this.discardModule();
      return { ok: false, error: { message: `Sandbox error: ${(error as Error).message}`, line: null }, logs: [] };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const key of [...this.sandboxes.keys()]) this.discard(key);
  }

  private async sandboxFor(code: string): Promise<Sandbox> {
    if (this.closed) throw new Error('The transformation runner is closed');
    const key = hashCode(code);
    const cached = this.sandboxes.get(key);
    if (cached) {
      this.sandboxes.delete(key);
      this.sandboxes.set(key, cached);
      return cached;
    }
    const module = await this.loadedModule();
    const existing = this.sandboxes.get(key); // another caller may have built it while we waited
    if (existing) return existing;
    let sandbox: Sandbox;
    try {
      sandbox = this.createSandbox(module, code);
    } catch (error) {
      // Anything but a failure of the code itself (e.g. the host's stack ran out inside the
      // WebAssembly) leaves the module in an unknown state: the next run loads a fresh one.
      if (!(error instanceof SandboxFailure) && this.module === module) this.discardModule();
      throw error;
    }
    this.sandboxes.set(key, sandbox);
    while (this.sandboxes.size > this.maxCached) this.discard(this.sandboxes.keys().next().value!);
    return sandbox;
  }

  private async loadedModule(): Promise<QuickJSWASMModule> {
    if (this.module) return this.module;
    this.loading ??= loadModule(this.poolMemoryBytes);
    try {
      this.module = await this.loading;
    } finally {
      this.loading = undefined;
    }
    return this.module;
  }

  /** A fresh runtime with the prelude and the user's code evaluated; throws SandboxFailure when the code does not load. */
  private createSandbox(module: QuickJSWASMModule, code: string): Sandbox {
    const runtime = module.newRuntime();
    runtime.setMemoryLimit(this.limits.memoryBytes);
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    const context = runtime.newContext();
    const partial: Partial<Sandbox> & { deadline: number } = { runtime, context, deadline: Infinity };
    runtime.setInterruptHandler(() => performance.now() > partial.deadline);
    try {
      const prelude = context.unwrapResult(context.evalCode(PRELUDE, 'prelude.js', { type: 'global', strict: true }));
      const run = context.getProp(prelude, 0);
      const collect = context.getProp(prelude, 1);
      const registered = context.getProp(prelude, 2);
      prelude.dispose();
      partial.run = run;
      partial.collect = collect;
      partial.deadline = performance.now() + this.limits.timeoutMs;
      const evaluated = context.evalCode(code, USER_FILENAME, { type: 'global' });
      partial.deadline = Infinity;
      if (evaluated.error) {
        const failure = this.vmFailure(partial as Sandbox, evaluated.error);
        registered.dispose();
        throw failure;
      }
      evaluated.value.dispose();
      const has = context.unwrapResult(context.callFunction(registered, context.undefined));
      const ok = context.dump(has) === true;
      has.dispose();
      registered.dispose();
      if (!ok) throw new SandboxFailure({ message: "The code never called addHandler('transform', (request, context) => request)", line: null });
      return partial as Sandbox;
    } catch (error) {
      try {
        partial.run?.dispose();
        partial.collect?.dispose();
        context.dispose();
        runtime.dispose();
      } catch {
        if (error instanceof SandboxFailure) this.discardModule(); // could not free it: start the module afresh
      }
      throw error;
    }
  }

  /** Calls the VM's run (and collect, for a promise), under the deadline. */
  private call(sandbox: Sandbox, input: string): VmResult {
    const { context, runtime } = sandbox;
    sandbox.deadline = performance.now() + this.limits.timeoutMs;
    try {
      const inputHandle = context.newString(input);
      const called = context.callFunction(sandbox.run, context.undefined, inputHandle);
      inputHandle.dispose();
      if (called.error) throw this.vmFailure(sandbox, called.error);
      let output = called.value;
      if (context.typeof(output) === 'undefined') {
        output.dispose();
        const jobs = runtime.executePendingJobs(-1);
        if (jobs.error) throw this.vmFailure(sandbox, jobs.error);
        const collected = context.callFunction(sandbox.collect, context.undefined);
        if (collected.error) throw this.vmFailure(sandbox, collected.error);
        output = collected.value;
      }
      const text = context.getString(output);
      output.dispose();
      if (Buffer.byteLength(text) > MAX_RESULT_BYTES + 256 * 1024) {
        throw new SandboxFailure({ message: `The transformed request is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MiB`, line: null });
      }
      return JSON.parse(text) as VmResult;
    } finally {
      sandbox.deadline = Infinity;
    }
  }

  /**
   * An exception that escaped the prelude's own catch: the deadline, running out of memory
   * (even while reporting an error) or an error in the code's top level. Disposes `errorHandle`.
   */
  private vmFailure(sandbox: Sandbox, errorHandle: QuickJSHandle): SandboxFailure {
    const timedOut = performance.now() > sandbox.deadline;
    let described: VmError;
    try {
      const dumped = sandbox.context.dump(errorHandle) as unknown;
      described = typeof dumped === 'object' && dumped !== null && 'message' in dumped
        ? { name: String((dumped as { name?: unknown }).name ?? 'Error'), message: String((dumped as { message: unknown }).message), stack: String((dumped as { stack?: unknown }).stack ?? '') }
        : { name: null, message: safeString(dumped), stack: '' };
    } catch {
      described = { name: 'InternalError', message: 'out of memory', stack: '' };
    } finally {
      errorHandle.dispose();
    }
    if (timedOut || (described.name === 'InternalError' && described.message === 'interrupted')) {
      return new SandboxFailure({ message: `Transformation ran longer than ${this.limits.timeoutMs} ms`, line: lineFromStack(described.stack) });
    }
    return new SandboxFailure(this.errorOf(described));
  }

  private errorOf(error: VmError): TransformError {
    if (error.name === 'InternalError' && error.message === 'out of memory') {
      return { message: `Transformation used more than ${formatBytes(this.limits.memoryBytes)}`, line: lineFromStack(error.stack) };
    }
    if (error.name === 'InternalError' && error.message === 'stack overflow') {
      return { message: 'Transformation overflowed its stack (too deep recursion)', line: lineFromStack(error.stack) };
    }
    const message = error.name === null ? `Uncaught ${error.message}` : `${error.name}: ${error.message}`;
    return { message: message.length > 1000 ? `${message.slice(0, 1000)}…` : message, line: lineFromStack(error.stack) };
  }

  private discard(key: string): void {
    const sandbox = this.sandboxes.get(key);
    if (!sandbox) return;
    this.sandboxes.delete(key);
    try {
      sandbox.run.dispose();
      sandbox.collect.dispose();
      sandbox.context.dispose();
      sandbox.runtime.dispose();
    } catch {
      this.discardModule(); // a runtime that cannot be freed means the module is in an unknown state
    }
  }

  private discardModule(): void {
    this.sandboxes.clear(); // their memory goes with the module's
    this.module = undefined;
  }
}

function hashCode(code: string): string {
  return createHash('sha256').update(code).digest('base64url');
}

function safeString(value: unknown): string {
  try {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return (text ?? String(value)).slice(0, 1000);
  } catch {
    return String(value).slice(0, 1000);
  }
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** The relay's transformation sandbox (one per process). */
export function createTransformRunner(limits: TransformLimits, options: { maxCachedSandboxes?: number; poolMemoryBytes?: number } = {}): QuickJsTransformRunner {
  return new QuickJsTransformRunner(limits, options);
}
