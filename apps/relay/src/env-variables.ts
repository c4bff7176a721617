/**
 * How the relay declares an environment variable: once, with the text docs/configuration.md
 * shows for it, its default and its parser. config.ts (HOOK_*) and tracing-config.ts (OTEL_*)
 * hold the declarations; the settings' types, the loader and the docs tables
 * (config-docs.ts) are all made from them, so none can drift from another.
 */
import { parseDuration } from '@hook/core';

/** A setting that is present but unusable: the relay refuses to start and says which and why. */
export class ConfigError extends Error {
  constructor(variable: string, value: string, expected: string) {
    super(`${variable}=${JSON.stringify(value)} is not valid: expected ${expected}.`);
    this.name = 'ConfigError';
  }

  /** A setting that must be present (in this configuration) and is not. */
  static missing(variable: string, why: string): ConfigError {
    const error = new ConfigError(variable, '', '');
    error.message = `${variable} is not set: ${why}.`;
    return error;
  }
}

/** An environment variable's value, trimmed; undefined when unset, empty or only spaces. */
export type EnvReader = (name: string) => string | undefined;

export function envReader(env: Record<string, string | undefined>): EnvReader {
  return (name) => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
}

/** Turns a variable's (trimmed, non-empty) text into its value, or throws a ConfigError naming `variable`. */
export type Parser<T> = (text: string, variable: string, env: EnvReader) => T;

/** A default that depends on other variables (HOOK_ALLOW_PRIVATE_DESTINATIONS on HOOK_DATABASE_URL). */
export class DerivedDefault<T> {
  readonly from: (env: EnvReader) => T;

  constructor(from: (env: EnvReader) => T) {
    this.from = from;
  }
}

export function derived<T>(from: (env: EnvReader) => T): DerivedDefault<T> {
  return new DerivedDefault(from);
}

export interface Variable<T> {
  /**
   * The variable's name. Several (`OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`):
   * one setting under a general and a specific name, and the last one set wins, unless `combine` says otherwise.
   */
  name: string | readonly [string, ...string[]];
  /** The docs table's section (the `## ` heading its table is under). */
  section: string;
  /** The docs' Type column: what the value looks like. */
  format: string;
  default: T | DerivedDefault<T>;
  /** The docs' Default column. */
  defaultText: string;
  /** The docs' Meaning column. */
  doc: string;
  parse: Parser<T>;
  /** For several names read together: the value of all that are set (in `name` order), made one. */
  combine?(values: T[]): T;
}

/** Declares a variable (only there to infer T). */
export function variable<T>(declaration: Variable<T>): Variable<T> {
  return declaration;
}

export function variableNames(declaration: Variable<unknown>): readonly string[] {
  return typeof declaration.name === 'string' ? [declaration.name] : declaration.name;
}

/** A variable's value in `env`: parsed when set, else its default. */
export function readVariable<T>(declaration: Variable<T>, env: EnvReader): T {
  const set = variableNames(declaration).filter((name) => env(name) !== undefined);
  if (set.length === 0) return declaration.default instanceof DerivedDefault ? declaration.default.from(env) : declaration.default;
  const parse = (name: string): T => declaration.parse(env(name) ?? '', name, env);
  // Only the winner is parsed: a general value the specific one overrides is never read.
  return declaration.combine ? declaration.combine(set.map(parse)) : parse(set.at(-1) ?? '');
}

export type VariableTable = Record<string, Variable<unknown>>;
/** The settings a table of variables gives: one field per entry, of that entry's type. */
export type ValuesOf<Table extends VariableTable> = { -readonly [Field in keyof Table]: Table[Field] extends Variable<infer T> ? T : never };

/** Every variable of `table`, in its order: the first unusable one throws. */
export function readVariables<Table extends VariableTable>(table: Table, env: EnvReader): ValuesOf<Table> {
  const values: Record<string, unknown> = {};
  for (const [field, declaration] of Object.entries(table)) values[field] = readVariable(declaration, env);
  return values as ValuesOf<Table>;
}

// The shared parsers. Each takes the text the error message ends with ("expected …").

/** The value as given. */
export const text: Parser<string> = (value) => value;

/** Digits only (no sign, decimals, exponent or hex), from `min` to `max`; `max` may depend on another variable. */
export function wholeNumber(min: number, max: number | ((env: EnvReader) => number), expected?: string): Parser<number> {
  return (value, name, env) => {
    const top = typeof max === 'number' ? max : max(env);
    const number = Number(value);
    if (!/^\d+$/.test(value) || number < min || number > top) throw new ConfigError(name, value, expected ?? `a whole number from ${min} to ${top}`);
    return number;
  };
}

/** A duration (`500ms`, `15s`, `2h8m`: parseDuration) in ms, from `minMs` to `maxMs`. */
export function duration(minMs: number, maxMs: number, expected: string): Parser<number> {
  return (value, name) => {
    const ms = parseDuration(value);
    if (ms === null || ms < minMs || ms > maxMs) throw new ConfigError(name, value, expected);
    return ms;
  };
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 };

/**
 * A size in bytes: `10485760`, `512kb` or `10mb` (all units powers of 1024, any case). A value
 * that is no size says so; one outside `range` gets `range.expected`.
 */
export function byteSize(range?: { min: number; max: number; expected: string }): Parser<number> {
  return (value, name) => {
    const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(value);
    const unit = match ? SIZE_UNITS[(match[2] ?? '').toLowerCase()] : undefined;
    if (!match || unit === undefined || Number(match[1]) <= 0) throw new ConfigError(name, value, 'a positive size in bytes, e.g. 10485760 or 10mb');
    const bytes = Number(match[1]) * unit;
    if (range && (bytes < range.min || bytes > range.max)) throw new ConfigError(name, value, range.expected);
    return bytes;
  };
}

/** One of `choices`; `anyCase` compares in lower case (the message still quotes the value as given). */
export function oneOf<const Choice extends string>(choices: readonly Choice[], options: { anyCase?: boolean; expected?: string } = {}): Parser<Choice> {
  return (value, name) => {
    const given = options.anyCase ? value.toLowerCase() : value;
    const choice = choices.find((candidate) => candidate === given);
    if (choice === undefined) throw new ConfigError(name, value, options.expected ?? choices.join(', '));
    return choice;
  };
}

/** `true`/`1`/`yes` or `false`/`0`/`no`, any case. */
export const boolean: Parser<boolean> = (value, name) => {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(name, value, 'true or false');
};

/** `on` or `off`, any case. */
export const onOff: Parser<boolean> = (value, name) => oneOf(['on', 'off'], { anyCase: true, expected: 'on or off' })(value, name, () => undefined) === 'on';

/** A URL with one of `protocols` (`['http:', 'https:']`); trailing slashes removed unless `asGiven`. */
export function url(protocols: readonly string[], options: { asGiven?: boolean } = {}): Parser<string> {
  return (value, name) => {
    if (URL.canParse(value) && protocols.includes(new URL(value).protocol)) return options.asGiven ? value : value.replace(/\/+$/, '');
    throw new ConfigError(name, value, `a URL starting with ${protocols.join(' or ')}//`);
  };
}

/** A parser whose result is then mapped (`off` → null). */
export function mapped<From, To>(parse: Parser<From>, map: (value: From) => To): Parser<To> {
  return (value, name, env) => map(parse(value, name, env));
}
