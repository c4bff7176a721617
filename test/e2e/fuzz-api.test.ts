/**
 * Hostile input against every operation of the relay's own /openapi.json (issue 8, item 2):
 * fast-check generates malformed and boundary requests (wrong JSON types per field, missing
 * and extra fields, huge strings, lone surrogates, RTL, NUL, 10k-deep JSON, boundary
 * numbers, bad ids and cursors, invalid UTF-8, wrong content types, oversized headers, no or
 * bad keys) and every answer must be: not a 5xx, given within a time limit, problem+json
 * with code/fix/request_id when an error, and valid against the schema /openapi.json
 * publishes for that status. FUZZ_RUNS sets the runs per operation (default 50).
 */
import http from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { api, createEndpoint, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '../support/relay.ts';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 50);
/** How long one request may go unanswered before the relay counts as hung. */
const REQUEST_TIMEOUT_MS = 10_000;
const MIB = 1024 * 1024;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  operation: Schema;
}

/** The ids and tokens one operation's account owns, so requests reach real rows too. */
interface Fixture {
  key: string;
  accountId: string;
  ids: Record<string, string>;
  ingestId: string;
  playgroundToken: string;
  cursors: string[];
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What was generated, for a failure message. */
  describe: string;
}

interface FuzzResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

let relay: TestRelay;
let port: number;
let openapi: { paths: Record<string, Record<string, Schema>> };
const ajv = addFormats(new Ajv({ strict: false, allErrors: false }));
const validators = new Map<string, ValidateFunction>();

beforeAll(async () => {
  relay = await startTestRelay();
  port = Number(new URL(relay.baseUrl).port);
  openapi = (await api(relay.baseUrl, 'GET', '/openapi.json')).body;
});

afterAll(async () => {
  await relay?.close();
});

function operations(): Operation[] {
  const list: Operation[] = [];
  for (const [path, methods] of Object.entries(openapi.paths)) {
    for (const [method, operation] of Object.entries(methods)) list.push({ method: method.toUpperCase(), path, operation });
  }
  return list;
}

/** One HTTP request over a fresh connection with the raw path, headers and bytes given; rejects when unanswered. */
function send(request: FuzzRequest): Promise<FuzzResponse> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = http.request({ host: '127.0.0.1', port, method: request.method, path: request.path, headers: request.headers, agent: false }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    outgoing.setTimeout(REQUEST_TIMEOUT_MS, () => outgoing.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    outgoing.on('error', (error) => {
      // The relay may answer (413, 400) and close before reading a huge body: that is an answer.
      if (!answered) reject(error);
    });
    outgoing.end(request.body);
  });
}

/** Percent-encodes every byte of the UTF-8 form (lone surrogates become U+FFFD, as any client would send). */
function encodeSegment(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((byte) => (/[A-Za-z0-9_\-.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** A JSON fragment written out as is (deep nesting that JSON.stringify would be slow to build). */
class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.entries(value).map(([name, item]) => `${JSON.stringify(name)}:${toJsonText(item)}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

const DEEP = 10_000;
const HUGE_STRING = 'x'.repeat(MIB - 64);
const HUGE_UNICODE = '\u202Eع\u0000'.repeat(20_000);

const hostileStrings = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '', ' ', '\t\n', '\u0000', 'a\u0000b', '\uD800', 'x\uDC00y', '\uDBFF\uDFFF', '\u202Eevil\u202C', 'مرحبا بالعالم', '\uFEFF', '\u200B',
    '🦄'.repeat(100), 'x'.repeat(201), 'x'.repeat(65_537), HUGE_UNICODE, HUGE_STRING,
    '../../../etc/passwd', '..%2F..%2F', '%00', '%', '${7*7}', "'; drop table events; --", '<script>alert(1)</script>',
    'NaN', 'Infinity', '-1', '1e309', '9007199254740993', '0x10', 'null', 'true', '[]', '{}',
    'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'javascript:alert(1)', 'http://169.254.169.254/latest', 'a@b', '@', 'not an email',
  ),
);

const boundaryNumbers = fc.constantFrom(-1, 0, 1, -0, 0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e308, -1e308, Number.MAX_VALUE, Number.MIN_VALUE, 3651, 101);

const deepJson = fc.constantFrom(
  new RawJson('['.repeat(DEEP) + ']'.repeat(DEEP)),
  new RawJson('{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP)),
  new RawJson('[{"a":'.repeat(DEEP / 2) + 'null' + '}]'.repeat(DEEP / 2)),
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileStrings },
  { weight: 2, arbitrary: boundaryNumbers },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': '' }, { __proto__: 'x' }, { constructor: { prototype: 1 } }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: fc.array(hostileStrings, { maxLength: 120 }) },
);

function randomUlid(): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFGHJKMNPQRSTVWXYZ'), minLength: 26, maxLength: 26 });
}

/** Values the schema accepts (the fixture's real ids where it wants an id). */
function validValue(schema: Schema | undefined, fixture: Fixture, name = ''): fc.Arbitrary<unknown> {
  if (!schema) return fc.jsonValue({ maxDepth: 2 });
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((branch: Schema) => validValue(branch, fixture, name)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const idPrefix = typeof schema.pattern === 'string' ? /^\^([a-z]+_)\[/.exec(schema.pattern)?.[1] : undefined;
  if (idPrefix) {
    const real = fixture.ids[idPrefix];
    return real ? fc.oneof(fc.constant(real), randomUlid().map((id) => idPrefix + id)) : randomUlid().map((id) => idPrefix + id);
  }
  switch (schema.type) {
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(validValue(schema.items, fixture, name), { maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      if (properties.length === 0) return fc.constant({});
      const required = new Set<string>(schema.required ?? []);
      return fc.record(Object.fromEntries(properties.map(([key, property]) => [key, validValue(property, fixture, key)])), { requiredKeys: properties.map(([key]) => key).filter((key) => required.has(key)) });
    }
    case 'string':
      if (schema.format === 'email') return fc.constantFrom('ops@example.com', 'a.b+c@example.org');
      if (schema.format === 'uri') return fc.constantFrom('http://127.0.0.1:9/hook', 'https://example.com/webhooks?x=1');
      if (schema.format === 'date-time') return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
      if (name === 'code') return fc.constantFrom("addHandler('transform', (request) => request)", 'throw new Error("x")', 'while (true) {}');
      if (name === 'payload') return fc.constantFrom('{"type":"a"}', 'not json');
      if (name === 'allowed_ips' || name === 'items') return fc.constantFrom('127.0.0.1', '::1', '10.0.0.0/8', '0.0.0.0/0');
      // A pattern is generated from, not filtered for: random text almost never matches a list
      // pattern such as `failed,retrying`'s, and a filter that never passes spins forever.
      if (typeof schema.pattern === 'string') {
        const pattern = new RegExp(schema.pattern);
        return fc.stringMatching(pattern).filter((text) => text.length >= (schema.minLength ?? 0) && text.length <= (schema.maxLength ?? Infinity));
      }
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 30, 30) });
  }
  return fc.jsonValue({ maxDepth: 2 });
}

/** Values just outside (or on) the schema's limits, beside the generic hostile ones. */
function boundaryValue(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const values: unknown[] = [];
  if (schema?.maxLength !== undefined) values.push('y'.repeat(schema.maxLength), 'y'.repeat(schema.maxLength + 1));
  if (schema?.minimum !== undefined) values.push(schema.minimum, schema.minimum - 1, String(schema.minimum));
  if (schema?.maximum !== undefined) values.push(schema.maximum, schema.maximum + 1, `${schema.maximum}.5`);
  if (schema?.maxItems !== undefined) values.push(Array.from({ length: schema.maxItems + 1 }, () => '127.0.0.1'));
  return values.length ? fc.constantFrom(...values) : hostileValue;
}

function fieldValue(schema: Schema | undefined, fixture: Fixture, name: string): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 3, arbitrary: validValue(schema, fixture, name) }, { weight: 3, arbitrary: hostileValue }, { weight: 1, arbitrary: boundaryValue(schema) });
}

/** An object body: a valid one with one field made hostile, or each field left out, valid, hostile or at a boundary, plus maybe unknown fields. */
function objectBody(schema: Schema | undefined, fixture: Fixture): fc.Arbitrary<unknown> {
  const names = Object.keys((schema?.properties ?? {}) as Record<string, Schema>);
  const oneBadField = names.length === 0 ? validValue(schema, fixture) : fc.tuple(validValue(schema, fixture), fc.constantFrom(...names)).chain(([valid, name]) =>
    fieldValue(schema!.properties[name], fixture, name).map((value) => ({ ...(valid as object), [name]: value })));
  return fc.oneof(validValue(schema, fixture), oneBadField, mixedObjectBody(schema, fixture));
}

function mixedObjectBody(schema: Schema | undefined, fixture: Fixture): fc.Arbitrary<unknown> {
  const properties = Object.entries((schema?.properties ?? {}) as Record<string, Schema>);
  const declared = fc.record(Object.fromEntries(properties.map(([key, property]) => [key, fieldValue(property, fixture, key)])), { requiredKeys: [] });
  const extra = fc.dictionary(fc.oneof(hostileStrings.filter((key) => key.length < 1000), fc.constantFrom('__proto__', 'constructor', 'id', 'account_id')), hostileValue, { maxKeys: 2 });
  return fc.tuple(declared, fc.option(extra, { freq: 3 })).map(([fields, more]) => ({ ...fields, ...(more ?? {}) }));
}

const contentTypes = fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 3, arbitrary: fc.constantFrom(
  'application/json; charset=utf-8', 'application/json; charset=utf-16', 'application/json; charset=latin1',
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/problem+json', 'application/octet-stream', '*/*', '',
  'application/json;;;', 'APPLICATION/JSON', `application/json; x=${'a'.repeat(4000)}`,
) });

type BodyPlan = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'text'; text: string } | { kind: 'bytes'; bytes: Uint8Array };

function bodyPlans(operation: Operation, fixture: Fixture): fc.Arbitrary<BodyPlan> {
  const schema = operation.operation.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  const jsonRpc = fc.record({
    jsonrpc: fc.oneof(fc.constant('2.0'), hostileValue),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null)),
    method: fc.oneof(fc.constantFrom('initialize', 'tools/list', 'tools/call', 'ping', 'resources/list'), hostileStrings),
    params: fc.oneof(fc.record({ name: fc.oneof(fc.constantFrom('get_event', 'list_events', 'get_endpoint', 'replay_event', 'update_endpoint', 'delete_endpoint', 'test_transformation'), hostileStrings), arguments: fc.oneof(objectBody({ properties: { id: { type: 'string', pattern: '^evt_[' }, endpoint_id: { type: 'string', pattern: '^ep_[' }, event_id: { type: 'string', pattern: '^evt_[' }, name: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 100 } } }, fixture), hostileValue) }), hostileValue),
  }, { requiredKeys: ['jsonrpc', 'method'] });
  if (operation.path === '/mcp') return fc.oneof({ weight: 4, arbitrary: jsonRpc.map((value): BodyPlan => ({ kind: 'json', value })) }, { weight: 1, arbitrary: hostileValue.map((value): BodyPlan => ({ kind: 'json', value })) });
  return fc.oneof(
    { weight: schema ? 8 : 2, arbitrary: objectBody(schema, fixture).map((value): BodyPlan => ({ kind: 'json', value })) },
    { weight: 1, arbitrary: fc.constant<BodyPlan>({ kind: 'none' }) },
    { weight: 2, arbitrary: hostileValue.map((value): BodyPlan => ({ kind: 'json', value })) },
    { weight: 1, arbitrary: fc.constantFrom('{"name":', '{', '}', '{"a":1}}', '\u0000', '{"name":"a"}\u0000', 'nul', '{"a":NaN}', '{"a":1e999999}', "{'a':1}", '\uFEFF{}').map((text): BodyPlan => ({ kind: 'text', text })) },
    { weight: 1, arbitrary: fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(Uint8Array.from([0xff, 0xfe, 0xfd]), Uint8Array.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), Uint8Array.from([0xed, 0xa0, 0x80]))).map((bytes): BodyPlan => ({ kind: 'bytes', bytes })) },
  );
}

/** Path parameter values, already encoded for the URL. */
function pathValue(schema: Schema | undefined, fixture: Fixture, name: string): fc.Arbitrary<string> {
  const real = name === 'ingest_id' ? fc.constant(fixture.ingestId) : validValue(schema, fixture).map(String);
  return fc.oneof(
    { weight: 4, arbitrary: real.map(encodeSegment) },
    { weight: 3, arbitrary: hostileStrings.filter((text) => text.length > 0 && text.length < 70_000).map(encodeSegment) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'key_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'mem_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'acct_01JD2Y0Z3M4N5P6Q7R8S9TVWXY',
        'ep_' + 'A'.repeat(300), 'ep_' + 'A'.repeat(20_000), 'ep_01jd2y0z3m4n5p6q7r8s9tvwxy', 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXU', 'ep_',
        '..', '..%2F..%2Fv1%2Faccount', '%2e%2e', '%252e%252e%252f', '%00', '%C3%28', '%FF%FE', '%', '%zz', '%E2%80%AE', 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY%00', '%20',
        encodeSegment(fixture.ids['ep_'] ?? '') + '%2F..', encodeSegment(fixture.ingestId).toLowerCase(), encodeSegment(fixture.ingestId) + 'x',
      ),
    },
  );
}

/** Cursors: none, real ones, tampered real ones and made-up ones. */
function cursorValue(fixture: Fixture): fc.Arbitrary<string> {
  const tampered = fixture.cursors.flatMap((cursor) => [cursor.slice(0, -2), `${cursor}A`, cursor.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A')), Buffer.from(cursor, 'base64url').toString('latin1')]);
  return fc.oneof(
    fc.constantFrom(...fixture.cursors, ...tampered, '', 'null', '0', '-1', 'eyJ9', 'eyJpZCI6MX0', Buffer.from('{"id":"evt_x","t":"nope"}').toString('base64url'), Buffer.from('["a",1,null]').toString('base64url'), Buffer.from('\u0000\u0000').toString('base64'), '====', 'x'.repeat(201)),
    hostileStrings,
  );
}

function queryString(operation: Operation, fixture: Fixture): fc.Arbitrary<string> {
  const parameters = ((operation.operation.parameters ?? []) as Schema[]).filter((parameter) => parameter.in === 'query');
  const pairs = parameters.map((parameter) => {
    const value: fc.Arbitrary<unknown> = parameter.name === 'cursor' ? fc.oneof(cursorValue(fixture), fc.constantFrom(...fixture.cursors)) : fc.oneof(validValue(parameter.schema, fixture, parameter.name), fieldValue(parameter.schema, fixture, parameter.name));
    return fc.option(fc.tuple(fc.constant(parameter.name), value, fc.boolean()), { freq: 3 });
  });
  const unknown = fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(fc.constantFrom('foo', 'limit[]', '__proto__', 'account_id', ''), hostileValue, fc.constant(false)) });
  return fc.tuple(fc.tuple(...pairs, unknown), fc.boolean()).map(([chosen, useRaw]) => {
    const parts: string[] = [];
    for (const pair of chosen) {
      if (!pair) continue;
      const [name, value, twice] = pair as [string, unknown, boolean];
      const text = typeof value === 'string' ? value : toJsonText(value);
      // Mostly short enough to get past Node's 16 KiB header limit; now and then far over it.
      parts.push(`${encodeSegment(name)}=${encodeSegment(text.slice(0, text.length > 2000 && text.length % 5 !== 0 ? 2000 : 70_000))}`);
      if (twice) parts.push(`${encodeSegment(name)}=1`);
    }
    if (useRaw && parts.length === 0) parts.push('%zz=%ff', '&&&=', 'a=%C3%28');
    return parts.length ? `?${parts.join('&')}` : '';
  });
}

type AuthPlan = 'valid' | 'none' | 'bad' | 'malformed' | 'huge' | 'basic';
const authPlans = fc.oneof({ weight: 17, arbitrary: fc.constant<AuthPlan>('valid') }, { weight: 3, arbitrary: fc.constantFrom<AuthPlan>('none', 'bad', 'malformed', 'huge', 'basic') });

function authorization(plan: AuthPlan, token: string): string | undefined {
  switch (plan) {
    case 'valid': return `Bearer ${token}`;
    case 'none': return undefined;
    case 'bad': return `Bearer ${token.slice(0, -3)}zzz`;
    case 'malformed': return 'Bearer';
    case 'huge': return `Bearer hk_${'A'.repeat(12_000)}`;
    case 'basic': return `Basic ${Buffer.from('a:b').toString('base64')}`;
  }
}

const extraHeaders = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 1, arbitrary: fc.constantFrom(2_000, 15_000, 17_000, 70_000).map((size) => ({ 'x-fuzz-padding': 'p'.repeat(size) })) },
  { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({ 'x-request-id': 'r'.repeat(5000) }, { 'x-forwarded-for': '1.2.3.4, ::1, nope' }, { accept: 'text/html' }, { 'accept-encoding': 'br, gzip, deflate' }, { 'content-encoding': 'gzip' }, { 'transfer-encoding': 'chunked' }, { expect: '100-continue' }, { 'x-http-method-override': 'DELETE' }, { host: 'evil.example' }) },
  { weight: 1, arbitrary: fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')), { maxKeys: 40 }) },
);

function requestFor(operation: Operation, fixture: Fixture): fc.Arbitrary<FuzzRequest> {
  const pathParameters = ((operation.operation.parameters ?? []) as Schema[]).filter((parameter) => parameter.in === 'path');
  const pathArbitrary = fc.tuple(...pathParameters.map((parameter) => pathValue(parameter.schema, fixture, parameter.name))).map((values) => {
    let path = operation.path;
    pathParameters.forEach((parameter, index) => { path = path.replace(`{${parameter.name}}`, values[index]!); });
    return path;
  });
  const ingest = operation.path.startsWith('/v1/ingest/');
  const suffix = ingest ? fc.option(fc.constantFrom('/a/b', '/%2e%2e/%2e%2e/v1/account', '/' + encodeSegment('\u202E\u0000'), '/' + 'z'.repeat(3000)), { freq: 4 }) : fc.constant(null);
  return fc.record({
    path: pathArbitrary,
    suffix,
    query: queryString(operation, fixture),
    body: bodyPlans(operation, fixture),
    contentType: fc.option(contentTypes, { freq: 8 }),
    auth: authPlans,
    extra: extraHeaders,
  }).map(({ path, suffix, query, body, contentType, auth, extra }) => {
    const token = operation.path.startsWith('/playground') ? fixture.playgroundToken : fixture.key;
    const headers: Record<string, string> = { ...(operation.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {}), ...extra };
    const header = authorization(auth, token);
    if (header) headers.authorization = header;
    let bytes: Buffer | undefined;
    if (body.kind === 'json') bytes = Buffer.from(toJsonText(body.value), 'utf8');
    else if (body.kind === 'text') bytes = Buffer.from(body.text, 'utf8');
    else if (body.kind === 'bytes') bytes = Buffer.from(body.bytes);
    if (bytes && ['GET', 'HEAD'].includes(operation.method) && !ingest && auth !== 'valid') bytes = undefined;
    if (bytes) headers['content-type'] = contentType ?? 'application/json';
    else if (contentType) headers['content-type'] = contentType;
    if (headers['transfer-encoding'] || headers['content-encoding']) delete headers['transfer-encoding'];
    if (bytes && !headers['transfer-encoding']) headers['content-length'] = String(bytes.length);
    const fullPath = path + (suffix ?? '') + query;
    const bodyText = bytes ? `${bytes.length} bytes ${JSON.stringify(bytes.subarray(0, 160).toString('latin1'))}` : 'no body';
    return {
      method: operation.method,
      path: fullPath,
      headers,
      body: bytes,
      describe: `${operation.method} ${fullPath.slice(0, 300)}${fullPath.length > 300 ? `… (${fullPath.length} chars)` : ''} auth=${auth} headers=${JSON.stringify(Object.fromEntries(Object.entries(extra).map(([name, value]) => [name, value.length > 60 ? `${value.length} chars` : value])))} content-type=${JSON.stringify(headers['content-type'] ?? null).slice(0, 80)} body=${bodyText}`,
    };
  });
}

function validatorFor(operation: Operation, status: number, contentType: string): { validate?: ValidateFunction; documented: boolean } {
  const responses = (operation.operation.responses ?? {}) as Record<string, Schema>;
  const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`];
  if (!response) return { documented: false };
  const media = contentType.split(';')[0]!.trim();
  const schema = response.content?.[media]?.schema;
  if (!schema) return { documented: response.content === undefined || Object.keys(response.content).length === 0 };
  const cacheKey = `${operation.method} ${operation.path} ${status} ${media}`;
  let validate = validators.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(cacheKey, validate);
  }
  return { validate, documented: true };
}

/** Every rule an answer to hostile input must follow; returns what was wrong, or nothing. */
function problemsWith(operation: Operation, request: FuzzRequest, response: FuzzResponse): string[] {
  const problems: string[] = [];
  const contentType = String(response.headers['content-type'] ?? '');
  if (response.status >= 500) problems.push(`answered ${response.status}`);
  const hasBody = request.method !== 'HEAD' && response.status !== 204 && response.status !== 304;
  let body: any;
  if (hasBody && response.body.length > 0 && !/json/.test(contentType)) {
    // Text (GET /metrics): it must be a format the operation publishes.
    body = response.body.toString('utf8');
  } else if (hasBody && response.body.length > 0) {
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      problems.push(`body is not JSON (${contentType}): ${response.body.subarray(0, 200).toString('latin1')}`);
    }
  }
  if (response.status >= 400 && hasBody) {
    // An operation may publish another error format (POST /mcp: the transport's JSON-RPC errors); it is then checked against that.
    const otherFormat = !contentType.startsWith('application/problem+json') && validatorFor(operation, response.status, contentType).validate !== undefined;
    if (!otherFormat && !contentType.startsWith('application/problem+json')) problems.push(`error is ${contentType || 'without content-type'}, not application/problem+json`);
    if (!otherFormat) for (const field of ['code', 'fix', 'request_id']) if (typeof body?.[field] !== 'string' || body[field] === '') problems.push(`error lacks ${field}`);
  }
  if (hasBody && body !== undefined && response.status < 500) {
    const { validate, documented } = validatorFor(operation, response.status, contentType);
    if (!documented) problems.push(`status ${response.status} with ${contentType} is not in /openapi.json for this operation`);
    else if (validate && !validate(body)) problems.push(`body does not match the published ${response.status} schema: ${ajv.errorsText(validate.errors)}`);
  }
  if (problems.length) problems.push(`response: ${response.status} ${response.body.subarray(0, 400).toString('utf8')}`);
  return problems;
}

/** A fresh enterprise account for one operation, with one of everything its ids can point at. */
async function makeFixture(): Promise<Fixture> {
  const { key, accountId } = await signUp(relay.baseUrl, { plan: 'enterprise' });
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'fuzz', destination: { type: 'url', url: 'http://127.0.0.1:9/hook' } });
  const spareEndpoint = await createEndpoint(relay.baseUrl, key, { name: 'spare' });
  const eventId = await sendEvent(endpoint.url.replace(/^https?:\/\/[^/]+/, relay.baseUrl), '{"type":"order.paid","n":1}');
  await sendEvent(endpoint.url.replace(/^https?:\/\/[^/]+/, relay.baseUrl), '{"type":"order.paid","n":2}');
  const spareKey = await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: { name: 'spare' } });
  await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: { name: 'spare 2' } });
  const member = await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: 'm@example.com', role: 'member' } });
  await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: 'n@example.com', role: 'admin' } });
  const session = await api(relay.baseUrl, 'POST', '/playground/session');
  const cursors: string[] = [];
  for (const list of ['/v1/events?limit=1', '/v1/endpoints?limit=1', '/v1/api-keys?limit=1', '/v1/members?limit=1']) {
    const page = await api(relay.baseUrl, 'GET', list, { key });
    if (typeof page.body?.next_cursor === 'string') cursors.push(page.body.next_cursor);
  }
  expect(cursors.length, 'the lists give real cursors to tamper with').toBeGreaterThan(0);
  return {
    key,
    accountId,
    ids: { 'ep_': spareEndpoint.id, 'evt_': eventId, 'key_': spareKey.body.id ?? spareKey.body.api_key?.id, 'mem_': member.body.id ?? member.body.member?.id, 'acct_': accountId },
    ingestId: endpoint.url.split('/').pop(),
    playgroundToken: session.body.token,
    cursors,
  };
}

test('every operation in /openapi.json answers hostile input with a documented 2xx/4xx, never a 5xx or a hang', { timeout: 600_000 }, async () => {
  const counts = new Map<string, number>();
  const statuses = new Map<string, Map<number, number>>();
  const failures: string[] = [];
  const list = operations();
  expect(list.length).toBeGreaterThan(30);
  const started = Date.now();
  for (const operation of list) {
    const name = `${operation.method} ${operation.path}`;
    const fixture = await makeFixture();
    const seen = new Map<number, number>();
    statuses.set(name, seen);
    let firstFailure: string | undefined;
    try {
      await fc.assert(
        fc.asyncProperty(requestFor(operation, fixture), async (request) => {
          counts.set(name, (counts.get(name) ?? 0) + 1);
          let response: FuzzResponse;
          try {
            response = await send(request);
          } catch (error) {
            firstFailure ??= `${request.describe}\n  → no answer: ${(error as Error).message}`;
            throw new Error(firstFailure);
          }
          seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
          const problems = problemsWith(operation, request, response);
          if (problems.length) {
            firstFailure ??= `${request.describe}\n  → ${problems.join('\n  → ')}`;
            throw new Error(firstFailure);
          }
          if (operation.path === '/v1/account' && operation.method === 'PATCH') {
            // An allow-list without 127.0.0.1 would lock the rest of this operation's runs out.
            await sqlRows(relay, "update account set allowed_ips = '{}' where id = ?", [fixture.accountId]).catch((error: Error) => {
              firstFailure ??= `resetting allowed_ips failed: ${error.message}`;
              throw error;
            });
          }
        }),
        { numRuns: FUZZ_RUNS, endOnFailure: true, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
      );
    } catch (error) {
      failures.push(`${name}: ${firstFailure ?? (error as Error).message.slice(-1500)} ${String((error as Error).cause ?? '')}`);
    }
  }
  const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
  console.log(`fuzz-api: ${total} requests over ${list.length} operations in ${Math.round((Date.now() - started) / 1000)} s (FUZZ_RUNS=${FUZZ_RUNS})`);
  for (const [name, count] of counts) console.log(`  ${String(count).padStart(4)}  ${name.padEnd(44)} statuses ${JSON.stringify(Object.fromEntries(statuses.get(name) ?? []))}`);
  expect(failures, failures.join('\n\n')).toEqual([]);
});

test('what the fuzzer found stays fixed: NUL in stored text is 400, oversized headers are problem+json 431', async () => {
  const { key } = await signUp(relay.baseUrl);
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'nul' });
  const nulCases: Array<[string, string, unknown]> = [
    ['GET', '/v1/ingest/a%00b', undefined],
    ['POST', '/v1/ingest/a%00b', undefined],
    ['GET', '/v1/events?type=a%00b', undefined],
    ['POST', '/v1/endpoints', { name: 'a\u0000b' }],
    ['PATCH', `/v1/endpoints/${endpoint.id}`, { name: 'a\u0000b' }],
    ['POST', '/v1/api-keys', { name: 'a\u0000b' }],
  ];
  for (const [method, path, json] of nulCases) {
    const response = await api(relay.baseUrl, method, path, { key, json });
    expect([400, 404], `${method} ${path}: ${JSON.stringify(response.body)}`).toContain(response.status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  }
  const oversized = await send({ method: 'GET', path: '/v1/account', headers: { authorization: `Bearer ${key}`, 'x-padding': 'p'.repeat(20_000) }, describe: '' });
  expect(oversized.status).toBe(431);
  expect(oversized.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(JSON.parse(oversized.body.toString())).toMatchObject({ status: 431, code: 'headers_too_large', fix: expect.any(String), request_id: expect.stringMatching(/^req_/) });
  // The relay still answers on a new connection.
  expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).status).toBe(200);
});

test('ingest URLs take any method, body and headers: 200 or a structured 4xx', { timeout: 120_000 }, async () => {
  const { key } = await signUp(relay.baseUrl, { plan: 'enterprise' });
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'any method' });
  const ingestPath = new URL(endpoint.url).pathname;
  const methods = fc.oneof(
    fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'LINK', 'UNLINK', 'SEARCH', 'REPORT', 'M-SEARCH', 'NOTIFY', 'SUBSCRIBE', 'LOCK', 'COPY', 'MOVE', 'QUERY'),
    fc.stringMatching(/^[A-Z]{1,12}$/),
  );
  const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/).filter((name) => !['content-length', 'transfer-encoding', 'host', 'connection', 'expect', 'upgrade', 'content-encoding'].includes(name));
  const headers = fc.dictionary(headerName, fc.string({ unit: 'binary-ascii', maxLength: 200 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')), { maxKeys: 30 });
  const body = fc.oneof(fc.constant(undefined), fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)), fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value))), fc.constant(Buffer.alloc(1024 * 1024 + 1, 0x61)));
  const statuses = new Map<number, number>();
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(methods, headers, body, fc.constantFrom('', '/nested/path', '/%00', '?a=1&a=2', '/x?%zz'), async (method, extra, bytes, suffix) => {
      runs += 1;
      const requestHeaders: Record<string, string> = { ...extra };
      if (bytes) requestHeaders['content-length'] = String(bytes.length);
      const request: FuzzRequest = { method, path: ingestPath + suffix, headers: requestHeaders, body: bytes, describe: `${method} ${suffix} ${JSON.stringify(extra).slice(0, 200)} ${bytes?.length ?? 0} bytes` };
      const response = await send(request);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      expect(response.status === 200 || (response.status >= 400 && response.status < 500), `${request.describe} → ${response.status} ${response.body.subarray(0, 300)}`).toBe(true);
      if (response.status >= 400 && method !== 'HEAD') {
        expect(response.headers['content-type'], request.describe).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(response.body.toString())).toMatchObject({ code: expect.any(String), fix: expect.any(String), request_id: expect.any(String) });
      }
    }),
    { numRuns: FUZZ_RUNS * 2 },
  );
  console.log(`fuzz-api ingest: ${runs} requests with random methods, headers and bodies; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
});
