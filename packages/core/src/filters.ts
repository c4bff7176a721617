/**
 * Endpoint filters (docs/filters.md): a JSON document that says which requests an
 * endpoint delivers, in the match syntax Hookdeck users know. Pure functions: the
 * matcher never throws, whatever the request holds, so a filter cannot break delivery.
 */
import type { FieldError } from './errors.ts';

/** A filter: one match schema per part of the request; a part left out matches anything. */
export interface EndpointFilter {
  body?: unknown;
  headers?: unknown;
  query?: unknown;
  path?: unknown;
}

/** The request a filter is matched against. */
export interface FilterRequest {
  /** Parsed JSON when the content is JSON, else the body as a string. */
  body: unknown;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** The query string parsed into an object (a repeated name gives an array), or the raw string without `?`. */
  query: Record<string, unknown> | string;
  path: string;
}

/** The parts of a request a filter may name. */
export const FILTER_PARTS = ['body', 'headers', 'query', 'path'] as const;

/** Every operator of the syntax. */
export const FILTER_OPERATORS = ['$eq', '$neq', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$startsWith', '$endsWith', '$exist', '$and', '$or', '$not'] as const;

/** Deepest nesting of a filter, so a hostile one cannot exhaust the stack. */
export const FILTER_MAX_DEPTH = 32;

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const OPERATORS = new Set<string>(FILTER_OPERATORS);

/** A query string as an object: `a=1&a=2&b=x` → `{a: ['1', '2'], b: 'x'}`. */
export function parseFilterQuery(query: string): Record<string, unknown> {
  const parsed: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    const existing = parsed[name];
    if (existing === undefined) parsed[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else parsed[name] = [existing, value];
  }
  return parsed;
}

/** Whether `request` passes `filter`: every part the filter names matches. Never throws. */
export function matchesFilter(filter: EndpointFilter | null | undefined, request: FilterRequest): boolean {
  if (!isPlainObject(filter)) return true;
  try {
    for (const part of FILTER_PARTS) {
      if (!(part in filter) || filter[part] === undefined) continue;
      const value = part === 'query' && typeof request.query === 'string' ? parseFilterQuery(request.query) : request[part];
      if (!matchValue(filter[part], value, 0)) return false;
    }
    return true;
  } catch {
    return false; // unreachable by design (validated filters, guarded types); a filter error never delivers by accident
  }
}

/** Deep equality of JSON values. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
  }
  return false;
}

/** Orders two values for $gt … $lte: numbers numerically (a numeric string against a number too), strings by code unit; else not comparable. */
function compare(value: unknown, operand: unknown): number | null {
  if (typeof operand === 'number') {
    const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    return Number.isNaN(number) ? null : number - operand;
  }
  if (typeof operand === 'string' && typeof value === 'string') return value < operand ? -1 : value > operand ? 1 : 0;
  return null;
}

function matchOperator(operator: string, operand: unknown, value: unknown, depth: number): boolean {
  switch (operator) {
    case '$eq': return deepEqual(value, operand);
    case '$neq': return !deepEqual(value, operand);
    case '$gt': { const c = compare(value, operand); return c !== null && c > 0; }
    case '$gte': { const c = compare(value, operand); return c !== null && c >= 0; }
    case '$lt': { const c = compare(value, operand); return c !== null && c < 0; }
    case '$lte': { const c = compare(value, operand); return c !== null && c <= 0; }
    case '$in': return isIn(value, operand);
    case '$nin': return !isIn(value, operand);
    case '$startsWith': return typeof value === 'string' && typeof operand === 'string' && value.startsWith(operand);
    case '$endsWith': return typeof value === 'string' && typeof operand === 'string' && value.endsWith(operand);
    case '$exist': return (value !== undefined) === (operand === true);
    case '$and': return Array.isArray(operand) && operand.every((schema) => matchValue(schema, value, depth + 1));
    case '$or': return Array.isArray(operand) && operand.some((schema) => matchValue(schema, value, depth + 1));
    case '$not': return !matchValue(operand, value, depth + 1);
    default: return false;
  }
}

/**
 * `$in`: with an array operand, the value is one of its items (an array value: any of
 * its items is); with a string operand, the value is a string contained in it.
 */
function isIn(value: unknown, operand: unknown): boolean {
  if (Array.isArray(operand)) {
    if (Array.isArray(value)) return value.some((item) => operand.some((candidate) => deepEqual(item, candidate)));
    return operand.some((candidate) => deepEqual(value, candidate));
  }
  if (typeof operand === 'string') return typeof value === 'string' && operand.includes(value);
  return false;
}

/**
 * Whether `value` matches `schema`:
 * - a primitive (string, number, boolean, null) equals the value, or, when the value is
 *   an array, is one of its items;
 * - an object of operators (`$…` keys) holds when every operator holds; its other keys
 *   are matched like a plain object's;
 * - a plain object needs an object value whose listed keys each match (others are
 *   ignored), or an array value with one item that matches;
 * - an array needs an array value containing, for each of its items, an item that
 *   matches it (order and extra items do not matter).
 */
function matchValue(schema: unknown, value: unknown, depth: number): boolean {
  if (depth > FILTER_MAX_DEPTH) return false;
  if (Array.isArray(schema)) {
    if (!Array.isArray(value)) return false;
    return schema.every((wanted) => value.some((item) => matchValue(wanted, item, depth + 1)));
  }
  if (isPlainObject(schema)) {
    const keys = Object.keys(schema);
    const operators = keys.filter((key) => key.startsWith('$'));
    const fields = keys.filter((key) => !key.startsWith('$'));
    for (const operator of operators) if (!matchOperator(operator, schema[operator], value, depth)) return false;
    if (fields.length === 0) return true;
    if (Array.isArray(value)) return value.some((item) => matchFields(schema, fields, item, depth));
    return matchFields(schema, fields, value, depth);
  }
  if (Array.isArray(value)) return value.some((item) => deepEqual(item, schema));
  return value === schema;
}

function matchFields(schema: Plain, fields: readonly string[], value: unknown, depth: number): boolean {
  if (!isPlainObject(value)) return false;
  return fields.every((field) => matchValue(schema[field], Object.hasOwn(value, field) ? value[field] : undefined, depth + 1));
}

/** Problems with a filter, each with where it is (`filter.body.amount.$gt`); empty when it is valid. */
export function validateFilter(filter: unknown, at = 'filter'): FieldError[] {
  const errors: FieldError[] = [];
  if (!isPlainObject(filter)) return [{ field: at, message: 'must be an object with any of body, headers, query, path' }];
  for (const [part, schema] of Object.entries(filter)) {
    if (!(FILTER_PARTS as readonly string[]).includes(part)) {
      errors.push({ field: `${at}.${part}`, message: `unknown part '${part}'; a filter matches body, headers, query or path` });
      continue;
    }
    validateSchema(schema, `${at}.${part}`, 0, errors);
  }
  return errors;
}

function validateSchema(schema: unknown, at: string, depth: number, errors: FieldError[]): void {
  if (errors.length >= 20) return;
  if (depth > FILTER_MAX_DEPTH) {
    errors.push({ field: at, message: `nested deeper than ${FILTER_MAX_DEPTH} levels` });
    return;
  }
  if (Array.isArray(schema)) {
    schema.forEach((item, i) => validateSchema(item, `${at}[${i}]`, depth + 1, errors));
    return;
  }
  if (!isPlainObject(schema)) return; // a primitive: equality
  for (const [key, operand] of Object.entries(schema)) {
    const where = `${at}.${key}`;
    if (!key.startsWith('$')) {
      validateSchema(operand, where, depth + 1, errors);
      continue;
    }
    if (!OPERATORS.has(key)) {
      errors.push({ field: where, message: `unknown operator '${key}'; use one of ${FILTER_OPERATORS.join(' ')}` });
      continue;
    }
    switch (key) {
      case '$gt': case '$gte': case '$lt': case '$lte':
        if (typeof operand !== 'number' && typeof operand !== 'string') errors.push({ field: where, message: `${key} takes a number or a string` });
        break;
      case '$in': case '$nin':
        if (!Array.isArray(operand) && typeof operand !== 'string') errors.push({ field: where, message: `${key} takes an array (or a string to search in)` });
        break;
      case '$startsWith': case '$endsWith':
        if (typeof operand !== 'string') errors.push({ field: where, message: `${key} takes a string` });
        break;
      case '$exist':
        if (typeof operand !== 'boolean') errors.push({ field: where, message: '$exist takes true or false' });
        break;
      case '$and': case '$or':
        if (!Array.isArray(operand) || operand.length === 0) errors.push({ field: where, message: `${key} takes a non-empty array of match schemas` });
        else operand.forEach((item, i) => validateSchema(item, `${where}[${i}]`, depth + 1, errors));
        break;
      case '$not':
        validateSchema(operand, where, depth + 1, errors);
        break;
      default: // $eq, $neq: any JSON value
    }
  }
}
