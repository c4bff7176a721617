/**
 * The sandbox that runs endpoint transformations: QuickJS compiled to WebAssembly
 * (quickjs-emscripten), never node:vm. See docs/transformations.md.
 *
 * - Nothing of the host is handed in: the only globals beyond the language are `addHandler`
 *   and `console`, both written in JavaScript inside the VM. Request and context go in as
 *   a JSON string parsed inside the VM; the result comes out as a JSON string.
 * - Limits: a deadline checked by QuickJS's interrupt handler (CPU time: a run is
 *   synchronous), a stack size, and memory. quickjs-emscripten's setMemoryLimit alone
 *   bounds single allocations, not a runtime's total (justjake/quickjs-emscripten#271), so
 *   each sandbox has its OWN WebAssembly instance of the engine with its own
 *   WebAssembly.Memory whose `maximum` is ENGINE_BASE_BYTES + the limit: a memory bomb can
 *   only fill its own memory, fails there with "used more than …", and that instance is
 *   dropped; no other sandbox shares a byte with it. The engine's WebAssembly.Module is
 *   compiled once per process (with its declared minimum memory lowered, see
 *   lowerMemoryMinimum) and instantiated per sandbox: ~5 ms to set up a new sandbox
 *   (instance ~1 ms, library glue ~2 ms, runtime + code ~1.5 ms) against ~2 ms when all
 *   shared one instance; ~0.35 MiB resident per cached sandbox.
 * - Pool: per code hash, an instance whose context has already evaluated the code (LRU,
 *   bounded in number and in the memory the idle instances have grown beyond their base).
 *   A run that times out, runs out of memory or traps drops its instance.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten';
import type { TransformContext, TransformError, TransformLimits, TransformLog, TransformOutcome, TransformRequest, TransformRunner } from './types.ts';

/** The file name user code is evaluated under: stack frames read `user.js:LINE:COLUMN`. */
const USER_FILENAME = 'user.js';
/** QuickJS's own stack limit. Wasm frames also use the host's native stack, so it stays well below Node's (~1 MB). */
const MAX_STACK_BYTES = 256 * 1024;
/** Largest result (the returned request as JSON) in bytes. */
export const MAX_RESULT_BYTES = 1024 * 1024;
/**
 * Deepest the returned request may be nested (the request itself is level 1). The
 * result crosses from its thread to the event loop by structured cloning, which recurses
 * on the receiving side's stack: about 4,000 levels overflow the main thread's, and a
 * message that cannot be read is silently dropped (its task held its thread until it was
 * taken for stuck). Far deeper than any webhook body.
 */
export const MAX_RESULT_DEPTH = 1000;
export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_BYTES = 1024;
/** Compiled codes kept ready (runtime + context with the handler registered). */
export const DEFAULT_MAX_CACHED_SANDBOXES = 64;
const WASM_PAGE_BYTES = 64 * 1024;
/**
 * The fixed memory every sandbox's engine needs before the code allocates anything,
 * measured with quickjs-emscripten 0.32.0 (release-sync): static data (~85 KiB) and the C
 * stack (5 MiB) end at 5,333,088 bytes (the initial __stack_pointer); an empty runtime and
 * context plus the prelude and a trivial transformation need ~0.3 MiB more: 87 pages
 * (5.44 MiB) is the smallest maximum with which a trivial transformation still runs (86
 * traps). One page of headroom gives 88 pages (5.5 MiB); a sandbox's memory may grow to
 * this + the limit. The stack is mostly never touched, so a cached sandbox's resident
 * memory is far below its base.
 */
export const ENGINE_BASE_BYTES = 88 * WASM_PAGE_BYTES;

export interface TransformRunnerOptions extends TransformLimits {
  /** Sandboxes (one per distinct code) kept warm. Default 64. */
  maxCachedSandboxes?: number;
  /**
   * Memory the cached sandboxes may hold together beyond their fixed base (WebAssembly
   * memory never shrinks, so a sandbox keeps what its largest run grew it to); past it the
   * least recently used are dropped. Default 4 × memoryBytes (64 MiB).
   */
  poolMemoryBytes?: number;
}

// The relay's tsconfig has no DOM lib, where the WebAssembly types live.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: unknown) => { exports: unknown };
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  RuntimeError: new () => Error;
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** Runs inside each VM before the user's code. Returns `[run, collect]`; keeps handlers and logs in a closure user code cannot reach. */
const PRELUDE = String.raw`(() => {
  const parse = JSON.parse, nativeStringify = JSON.stringify, isArray = Array.isArray, MAX_LINES = ${MAX_LOG_LINES}, MAX_LINE = ${MAX_LOG_LINE_BYTES};
  // QuickJS's JSON.stringify is native and never polls the interrupt handler on its own,
  // and its cycle check makes it cost (objects × depth): a shared, deeply nested value
  // holds the thread for seconds past the deadline. Given a replacer function it calls
  // back into JavaScript for every value, where the interrupt handler runs, so every
  // serialisation here (the code's own JSON.stringify, console, the result) goes through
  // one. The replacer also tracks depth: stringify walks depth first, so the holder of
  // each value is on the stack of values entered so far.
  const tooDeep = {};
  const serialise = (value, replacer, space, maxDepth) => {
    let keep;
    if (isArray(replacer)) {
      const names = [];
      for (const item of replacer) {
        const name = typeof item === 'string' ? item : typeof item === 'number' || item instanceof String || item instanceof Number ? String(item) : undefined;
        if (name !== undefined && !names.includes(name)) names.push(name);
      }
      // The allow list applies to every object (not arrays): a copy with only those keys.
      keep = (v) => {
        if (typeof v !== 'object' || v === null || isArray(v)) return v;
        const kept = {};
        for (const name of names) { const field = v[name]; if (field !== undefined) Object.defineProperty(kept, name, { value: field, enumerable: true, writable: true, configurable: true }); }
        return kept;
      };
    }
    const user = typeof replacer === 'function' ? replacer : undefined;
    const entered = [];
    return nativeStringify(value, function (key, v) {
      if (user) v = user.call(this, key, v);
      else if (keep) v = keep(v);
      while (entered.length > 0 && entered[entered.length - 1] !== this) entered.pop();
      if (typeof v === 'object' && v !== null) {
        if (entered.length >= maxDepth) throw tooDeep;
        entered.push(v);
      }
      return v;
    }, space);
  };
  const stringify = (value) => serialise(value, undefined, undefined, Infinity);
  Object.defineProperty(JSON, 'stringify', { value: function stringify(value, replacer, space) { return serialise(value, replacer, space, Infinity); }, writable: true, configurable: true });
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
  /** maxDepth: how deep the outcome (the request is its level 2) may be; deeper gives { tooDeep } instead. */
  const finish = (outcome, maxDepth = Infinity) => {
    if (dropped > 0) logs.push({ level: 'warn', message: dropped + ' more console lines were dropped (at most ' + MAX_LINES + ')' });
    try { return serialise({ ...outcome, logs, type: newType }, undefined, undefined, maxDepth); } catch (error) {
      if (error !== tooDeep) throw error;
      return nativeStringify({ tooDeep: true, logs, type: newType });
    }
  };
  const done = (result) => {
    if (result === undefined || result === null || typeof result !== 'object') {
      return finish({ error: { name: 'TypeError', message: 'The transform handler returned ' + (result === null ? 'null' : typeof result) + '; return the request (changed or not)', stack: '' } });
    }
    return finish({ request: result }, ${MAX_RESULT_DEPTH} + 1);
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
  /** This sandbox's own WebAssembly memory (no other sandbox uses it). */
  memory: WasmMemory;
  /** How far the memory has grown beyond its initial size, as last counted into the pool. */
  grown: number;
}

interface VmError {
  name: string | null;
  message: string;
  stack: string;
}

interface VmResult {
  request?: unknown;
  error?: VmError;
  /** The request was nested deeper than MAX_RESULT_DEPTH. */
  tooDeep?: true;
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

/** Reads an unsigned LEB128 at `offset`: [value, bytes]. */
function readLeb(bytes: Uint8Array, offset: number): [number, number] {
  let value = 0;
  let length = 0;
  let byte: number;
  do {
    byte = bytes[offset + length]!;
    value += (byte & 0x7f) * 2 ** (7 * length);
    length++;
  } while (byte & 0x80);
  return [value, length];
}

/**
 * The engine's wasm with its imported memory's declared minimum lowered to `pages`. The
 * build declares 256 pages (16 MiB, Emscripten's INITIAL_MEMORY) although it needs 5.1 MiB
 * to start: kept, that would make every sandbox's floor 16 MiB and a limit below it
 * meaningless. The new value is written in the same number of LEB128 bytes (a padded
 * encoding is valid wasm), so nothing else in the binary moves.
 */
function lowerMemoryMinimum(wasm: Uint8Array, pages: number): Uint8Array {
  const bytes = new Uint8Array(wasm);
  let offset = 8; // magic and version
  while (offset < bytes.length) {
    const id = bytes[offset++]!;
    const [size, sizeLength] = readLeb(bytes, offset);
    offset += sizeLength;
    const end = offset + size;
    if (id !== 2) { // not the import section
      offset = end;
      continue;
    }
    let [count, countLength] = readLeb(bytes, offset);
    offset += countLength;
    const skipName = () => {
      const [length, lengthLength] = readLeb(bytes, offset);
      offset += lengthLength + length;
    };
    const skipLeb = () => { offset += readLeb(bytes, offset)[1]; };
    for (; count > 0; count--) {
      skipName();
      skipName();
      const kind = bytes[offset++]!;
      if (kind === 0) skipLeb(); // function: type index
      else if (kind === 1) { offset++; const flags = bytes[offset++]!; skipLeb(); if (flags & 1) skipLeb(); } // table
      else if (kind === 3) offset += 2; // global: type, mutability
      else if (kind === 2) {
        const flags = bytes[offset++]!;
        if (flags & ~1) throw new Error('The QuickJS wasm imports a memory of an unexpected kind');
        const [, minLength] = readLeb(bytes, offset);
        if (pages >= 2 ** (7 * minLength)) throw new Error('The QuickJS wasm memory minimum cannot be rewritten');
        for (let i = 0; i < minLength; i++) bytes[offset + i] = ((pages / 2 ** (7 * i)) & 0x7f) | (i < minLength - 1 ? 0x80 : 0);
        return bytes;
      } else throw new Error(`The QuickJS wasm has an import of unknown kind ${kind}`);
    }
    break;
  }
  throw new Error('The QuickJS wasm imports no memory');
}

let compiledEngine: object | undefined;

/** The engine's WebAssembly.Module, compiled once per process (~5 ms) and instantiated per sandbox. */
function engineModule(): object {
  if (!compiledEngine) {
    // Resolved from quickjs-emscripten itself: the variant it loads as RELEASE_SYNC.
    const fromLibrary = createRequire(createRequire(import.meta.url).resolve('quickjs-emscripten'));
    const wasm = readFileSync(fromLibrary.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));
    compiledEngine = new Wasm.Module(lowerMemoryMinimum(wasm, ENGINE_BASE_BYTES / WASM_PAGE_BYTES));
  }
  return compiledEngine;
}

/** A new instance of the engine with its own memory of at most ENGINE_BASE_BYTES + memoryBytes. */
async function newEngine(memoryBytes: number) {
  const module = engineModule();
  const initial = ENGINE_BASE_BYTES / WASM_PAGE_BYTES;
  const memory = new Wasm.Memory({ initial, maximum: initial + Math.ceil(memoryBytes / WASM_PAGE_BYTES) });
  const engine = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, {
    wasmMemory: memory as never,
    // Instantiated synchronously here rather than through newVariant's wasmModule option,
    // whose asynchronous instantiateWasm would leave a failure as an unhandled rejection
    // and the load pending for ever; a throw here rejects the load.
    emscriptenModule: {
      instantiateWasm(imports: unknown, onSuccess: (instance: unknown, module: unknown) => void) {
        const instance = new Wasm.Instance(module, imports);
        onSuccess(instance, module);
        return instance.exports;
      },
    } as never,
  }));
  return { engine, memory };
}

export class QuickJsTransformRunner implements TransformRunner {
  /** Insertion order is recency: a hit is deleted and set again. */
  private readonly sandboxes = new Map<string, Sandbox>();
  /** Sandboxes being built, so that concurrent first runs of one code build it once. */
  private readonly building = new Map<string, Promise<Sandbox>>();
  private readonly maxCached: number;
  private readonly poolMemoryBytes: number;
  /** Sum of the cached sandboxes' `grown`. */
  private grownBytes = 0;
  private closed = false;
  private readonly limits: TransformLimits;

  constructor(limits: TransformLimits, options: { maxCachedSandboxes?: number; poolMemoryBytes?: number } = {}) {
    this.limits = limits;
    this.maxCached = options.maxCachedSandboxes ?? DEFAULT_MAX_CACHED_SANDBOXES;
    this.poolMemoryBytes = options.poolMemoryBytes ?? 4 * limits.memoryBytes;
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
    const key = hashCode(code);
    let sandbox: Sandbox;
    try {
      sandbox = await this.sandboxFor(code, key);
    } catch (error) {
      if (error instanceof SandboxFailure) return { ok: false, error: error.error, logs: error.logs };
      return { ok: false, error: { message: `Sandbox error: ${(error as Error).message}`, line: null }, logs: [] };
    }
    try {
      const result = this.call(sandbox, JSON.stringify({ request, context: { event_id: context.event_id, type: context.type, endpoint: { id: context.endpoint.id, name: context.endpoint.name } } }));
      // Out of memory even though the code caught it: its memory is full, maybe for good (a
      // module-level leak), so the sandbox goes like one whose error escaped.
      if (result.error?.name === 'InternalError' && result.error.message === 'out of memory') this.discard(key, sandbox);
      else this.account(key, sandbox);
      if (result.error) return { ok: false, error: this.errorOf(result.error), logs: result.logs };
      if (result.tooDeep) return { ok: false, error: { message: `The transformed request is nested deeper than ${MAX_RESULT_DEPTH} levels`, line: null }, logs: result.logs };
      // The request is part of the output, and serialising again what was parsed from it
      // cannot make it longer but by a difference in how the two engines write a value; an
      // output within half the limit leaves room for any, only a larger one is measured again.
      if (result.outputBytes * 2 > MAX_RESULT_BYTES && Buffer.byteLength(JSON.stringify(result.request) ?? '') > MAX_RESULT_BYTES) {
        return { ok: false, error: { message: `The transformed request is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MiB`, line: null }, logs: result.logs };
      }
      const transformed = toRequest(result.request);
      if (typeof transformed === 'string') return { ok: false, error: { message: transformed, line: null }, logs: result.logs };
      return { ok: true, request: transformed, ...(result.type !== undefined ? { type: result.type } : {}), logs: result.logs };
    } catch (error) {
      // The sandbox's state can no longer be trusted; being the only user of its
      // WebAssembly instance, it is simply dropped (with its memory) and nothing else is.
      this.discard(key, sandbox);
      if (error instanceof SandboxFailure) return { ok: false, error: error.error, logs: error.logs };
      // The WebAssembly itself failed (a trap, or the host's stack ran out inside it).
      return { ok: false, error: this.trapError(sandbox, error), logs: [] };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [key, sandbox] of [...this.sandboxes]) this.discard(key, sandbox);
  }

  private async sandboxFor(code: string, key = hashCode(code)): Promise<Sandbox> {
    if (this.closed) throw new Error('The transformation runner is closed');
    const cached = this.sandboxes.get(key);
    if (cached) {
      this.sandboxes.delete(key);
      this.sandboxes.set(key, cached);
      return cached;
    }
    let pending = this.building.get(key);
    if (!pending) {
      pending = this.build(key, code);
      this.building.set(key, pending);
    }
    return pending;
  }

  private async build(key: string, code: string): Promise<Sandbox> {
    try {
      const { engine, memory } = await newEngine(this.limits.memoryBytes);
      if (this.closed) throw new Error('The transformation runner is closed');
      let sandbox: Sandbox;
      try {
        sandbox = this.createSandbox(engine.newRuntime(), memory, code);
      } catch (error) {
        // The instance is dropped whatever went wrong: no other sandbox shares it.
        if (error instanceof SandboxFailure) throw error;
        throw new SandboxFailure(this.trapError({ memory }, error));
      }
      this.sandboxes.set(key, sandbox);
      this.account(key, sandbox);
      while (this.sandboxes.size > this.maxCached) {
        const [oldestKey, oldest] = this.sandboxes.entries().next().value!;
        this.discard(oldestKey, oldest);
      }
      return sandbox;
    } finally {
      this.building.delete(key);
    }
  }

  /** Counts what `sandbox` grew to into the pool, then drops the least recently used others while the pool is over its budget. */
  private account(key: string, sandbox: Sandbox): void {
    if (this.sandboxes.get(key) !== sandbox) return;
    const grown = sandbox.memory.buffer.byteLength - ENGINE_BASE_BYTES;
    this.grownBytes += grown - sandbox.grown;
    sandbox.grown = grown;
    for (const [otherKey, other] of this.sandboxes) {
      if (this.grownBytes <= this.poolMemoryBytes) break;
      if (other !== sandbox) this.discard(otherKey, other);
    }
  }

  /** A trap or host error out of the WebAssembly; at its memory's maximum it is the memory limit. */
  private trapError(sandbox: { memory: WasmMemory }, error: unknown): TransformError {
    const full = sandbox.memory.buffer.byteLength + 2 * 1024 * 1024 >= ENGINE_BASE_BYTES + this.limits.memoryBytes;
    if (error instanceof Wasm.RuntimeError && full) return { message: `Transformation used more than ${formatBytes(this.limits.memoryBytes)}`, line: null };
    return { message: `Sandbox error: ${(error as Error).message}`, line: null };
  }

  /** A fresh runtime with the prelude and the user's code evaluated; throws SandboxFailure when the code does not load. */
  private createSandbox(runtime: QuickJSRuntime, memory: WasmMemory, code: string): Sandbox {
    runtime.setMemoryLimit(this.limits.memoryBytes);
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    const context = runtime.newContext();
    const partial: Partial<Sandbox> & { deadline: number } = { runtime, context, deadline: Infinity, memory, grown: 0 };
    runtime.setInterruptHandler(() => performance.now() > partial.deadline);
    // On a throw the caller drops the whole instance: nothing to free handle by handle.
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
  }

  /** Calls the VM's run (and collect, for a promise), under the deadline. */
  private call(sandbox: Sandbox, input: string): VmResult & { outputBytes: number } {
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
      const outputBytes = Buffer.byteLength(text);
      if (outputBytes > MAX_RESULT_BYTES + 256 * 1024) {
        throw new SandboxFailure({ message: `The transformed request is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MiB`, line: null });
      }
      return { ...(JSON.parse(text) as VmResult), outputBytes };
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

  /** Forgets a sandbox; its WebAssembly instance and memory, used by nothing else, go with the garbage. */
  private discard(key: string, sandbox: Sandbox): void {
    if (this.sandboxes.get(key) !== sandbox) return;
    this.sandboxes.delete(key);
    this.grownBytes -= sandbox.grown;
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
