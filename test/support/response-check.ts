/**
 * Every JSON answer of a test relay checked against its route's response schema, strictly:
 * no field the schema does not name, every required field there, formats right. Fastify's
 * serializer drops fields a schema does not name without a word, so without this a route
 * whose answer drifts from its schema (and /openapi.json, the client's types and the MCP
 * tools' schemas, all made from the same @hook/core/schemas) would go unnoticed.
 *
 * A drifting answer becomes a 500 and is recorded; the test relay's close() fails with the
 * list, so every test on a test relay is also a drift test.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface ResponseCheck {
  /** `GET /v1/account 200`: each route and status whose answer was checked. */
  checked: Set<string>;
  drifts: ResponseDrift[];
}

export interface ResponseDrift {
  route: string;
  status: number;
  errors: string[];
}

type Json = Record<string, unknown>;

/** Subschemas that are conditions, not shapes: a closed object there would change what they test. */
const CONDITIONS = new Set(['if', 'not']);

/** The schema with `additionalProperties: false` on each object that does not say otherwise. */
export function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = CONDITIONS.has(key)
      ? value
      : key === 'properties' || key === 'patternProperties'
        ? Object.fromEntries(Object.entries(value as Json).map(([name, schema]) => [name, strict(schema)]))
        : strict(value);
  }
  if (out.type === 'object' && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/** The response schema a route declares for a status: the exact code, then `4XX`-style, then `default`. */
function responseSchema(request: FastifyRequest, status: number): unknown {
  const responses = request.routeOptions.schema?.response as Json | undefined;
  if (!responses) return undefined;
  const declared = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  if (!declared || typeof declared !== 'object') return undefined;
  // The OpenAPI form: { description, content: { 'application/json': { schema } } }.
  const content = (declared as Json).content as Record<string, { schema?: unknown }> | undefined;
  if (content) return Object.values(content)[0]?.schema;
  return declared;
}

/** Adds the check to an app that is not ready yet; returns what it checked and the drifts it found. */
export function checkResponses(app: FastifyInstance): ResponseCheck {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  const compiled = new WeakMap<object, ValidateFunction>();
  const check: ResponseCheck = { checked: new Set(), drifts: [] };
  app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const schema = responseSchema(request, reply.statusCode);
    if (!schema || typeof schema !== 'object') return payload;
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(strict(schema) as Json);
      compiled.set(schema, validate);
    }
    const route = `${request.method} ${request.routeOptions.url ?? request.url}`;
    check.checked.add(`${route} ${reply.statusCode}`);
    // What the serializer would write, as a client reads it (dates become strings, undefined fields go).
    const sent: unknown = JSON.parse(JSON.stringify(payload) ?? 'null');
    if (validate(sent)) return payload;
    const drift: ResponseDrift = {
      route,
      status: reply.statusCode,
      errors: (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}${error.params && 'additionalProperty' in error.params ? `: ${String(error.params.additionalProperty)}` : ''}`),
    };
    check.drifts.push(drift);
    if (reply.statusCode >= 500) return payload; // the 500 this check made: its problem is reported already
    throw new Error(`Response drifts from its schema (${drift.route} ${drift.status}): ${drift.errors.join('; ')}`);
  });
  return check;
}
