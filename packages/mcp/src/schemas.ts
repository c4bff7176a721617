/**
 * What the tools take and give back: zod schemas made from the REST API's own schemas in
 * @hook/core/schemas (z.fromJSONSchema), not a second copy. A field added there reaches the
 * tools' input and output schemas by itself.
 *
 * Both keep the fields, their types, which are required and the enums, and leave out the
 * checks of a value's form (format, pattern, lengths) and if/then: the relay makes those
 * and answers validation_failed naming the field and the fix, which serves an agent better
 * than the SDK's own refusal (and zod's format checks could refuse a value the relay
 * accepts). An input keeps its range (minimum, maximum): without one zod writes an integer
 * as -2^53..2^53, which tells an agent choosing `limit` something untrue. Inputs refuse
 * unknown fields and carry descriptions written for the agent choosing values.
 *
 * Outputs are loose (extra fields pass) so a relay newer than this package can add fields
 * without breaking a client that checks the output schema, and carry the shape only: no
 * descriptions or examples. tools/list is read into an agent's context on every session,
 * and the same resource repeats in several tools (an endpoint in four, the account in
 * four): the fields' prose cost a third of it, and says what docs/api.md and
 * /openapi.json say. A tool's own words about its result stay (they are written in the
 * tool, not here). A test holds tools/list to a byte budget (packages/mcp/test/size.test.ts).
 */
import * as S from '@hook/core/schemas';
import type { Static, TObject, TProperties, TSchema } from '@hook/core/schemas';
import { z } from 'zod';

/** The core schema each derived zod schema was made from (tests read it). */
const SOURCES = new WeakMap<z.ZodType, TSchema>();

/** The core schema a tool's input or output field was made from; undefined for one written here. */
export function coreSchemaOf(schema: z.ZodType): TSchema | undefined {
  return SOURCES.get(schema);
}

type Json = Record<string, unknown>;

/** Checks of a value's form that the relay makes and answers validation_failed for, naming the field and the fix. */
const VALUE_CHECKS = new Set(['format', 'pattern', 'minLength', 'maxLength', 'maxItems', 'minItems']);
/** A number's range: kept in inputs (an agent chooses the value), left out of outputs with the other checks. */
const RANGE = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);
/** Prose about a value, left out of outputs (see above). */
const PROSE = new Set(['description', 'examples', 'title']);

/**
 * A core JSON Schema as zod can read it: if/then/else go (fromJSONSchema reads none of
 * them) and so do checks of a value's form (VALUE_CHECKS); for an output also ranges,
 * prose and `additionalProperties: false`, so an object lets extra fields through.
 */
function readable(node: unknown, output: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => readable(item, output));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'if' || key === 'then' || key === 'else') continue;
    // An allOf of if/then rules only (Destination's per-type rules) is nothing once they are dropped.
    if (key === 'allOf' && Array.isArray(value) && value.every((rule) => Object.keys(rule as Json).every((name) => name === 'if' || name === 'then' || name === 'else'))) continue;
    if (VALUE_CHECKS.has(key)) continue;
    if (output && (RANGE.has(key) || PROSE.has(key))) continue;
    if (output && key === 'additionalProperties' && value === false) continue;
    out[key] =
      key === 'properties' || key === 'patternProperties'
        ? Object.fromEntries(Object.entries(value as Json).map(([name, schema]) => [name, readable(schema, output)]))
        : readable(value, output);
  }
  return out;
}

function convert<T extends TSchema>(schema: T, output: boolean): z.ZodType<Static<T>> {
  const made = z.fromJSONSchema(readable(schema, output) as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Static<T>>;
  SOURCES.set(made, schema);
  return made;
}

/** A tool output field that is the core schema, loosened (see above). */
export function outputOf<T extends TSchema>(schema: T): z.ZodType<Static<T>> {
  return convert(schema, true);
}

/** A tool input field that is the core schema; `description` replaces the schema's for the agent. */
export function inputOf<T extends TSchema>(schema: T, description?: string): z.ZodType<Static<T>> {
  const made = convert(schema, false);
  if (description === undefined) return made;
  const described = made.describe(description);
  SOURCES.set(described, schema);
  return described;
}

/** The zod raw shape of a core object schema's fields: required ones as they are, the others optional. */
type ShapeOf<P extends TProperties, Required extends PropertyKey> = {
  -readonly [K in keyof P]: K extends Required ? z.ZodType<Static<P[K]>> : z.ZodOptional<z.ZodType<Exclude<Static<P[K]>, undefined>>>;
};
type RequiredOf<T extends TObject> = T['required'] extends readonly (infer K)[] ? K & PropertyKey : never;

function shapeOf<T extends TObject>(schema: T, make: (field: TSchema, name: string) => z.ZodType): ShapeOf<T['properties'], RequiredOf<T>> {
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.fromEntries(
    Object.entries(schema.properties).map(([name, field]) => {
      const made = make(field as TSchema, name);
      return [name, required.has(name) ? made : made.optional()];
    }),
  ) as ShapeOf<T['properties'], RequiredOf<T>>;
}

/** A tool's whole output as a core object schema's fields (get_account: GET /v1/account's JSON). */
export function outputShapeOf<T extends TObject>(schema: T): ShapeOf<T['properties'], RequiredOf<T>> {
  return shapeOf(schema, (field) => outputOf(field));
}

/**
 * A tool's input as a core request schema's fields (create_endpoint: POST /v1/endpoints's
 * body), `descriptions` replacing the API's for the agent. `pick` keeps only those fields.
 */
export function inputShapeOf<T extends TObject, K extends keyof T['properties'] & string = keyof T['properties'] & string>(
  schema: T,
  descriptions: Partial<Record<keyof T['properties'], string>> = {},
  pick?: readonly K[],
): Pick<ShapeOf<T['properties'], RequiredOf<T>>, K> {
  const shape = shapeOf(schema, (field, name) => inputOf(field, descriptions[name as keyof T['properties']]));
  if (!pick) return shape;
  return Object.fromEntries(pick.map((name) => [name, shape[name]])) as Pick<ShapeOf<T['properties'], RequiredOf<T>>, K>;
}

/** A core object schema without some of its fields (secrets stay out of model context). */
function without<T extends TObject, K extends keyof T['properties'] & string>(schema: T, ...names: K[]): TObject<Omit<T['properties'], K>> {
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !names.includes(name as K)));
  return { ...schema, properties, required: ((schema.required as string[] | undefined) ?? []).filter((name) => !names.includes(name as K)) } as unknown as TObject<Omit<T['properties'], K>>;
}

/** A core object schema with only some of its fields (a tool that changes one thing answers with what changed). */
function pick<T extends TObject, K extends keyof T['properties'] & string>(schema: T, ...names: K[]): TObject<Pick<T['properties'], K>> {
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([name]) => names.includes(name as K)));
  return { ...schema, properties, required: ((schema.required as string[] | undefined) ?? []).filter((name) => names.includes(name as K)) } as unknown as TObject<Pick<T['properties'], K>>;
}

// Outputs.
export const destinationSchema = outputOf(S.DestinationSchema);
export const endpointSchema = outputOf(S.EndpointSchema);
export const accountDetailsShape = outputShapeOf(S.AccountDetailsSchema);
export const eventSummarySchema = outputOf(S.EventSummarySchema);
export const eventSchema = outputOf(S.EventSchema);
export const memberSchema = outputOf(S.MemberSchema);
export const issueSchema = outputOf(S.IssueSchema);
/** What acknowledging, resolving or retrying an issue changed: its status and where its events stand (get_issue has the rest). */
export const issueStateSchema = outputOf(pick(S.IssueSchema, 'id', 'status', 'resolved_by', 'acknowledged_at', 'resolved_at', 'events'));
export const replayOutcomeSchema = outputOf(S.ReplayResultSchema);
/** The account's notification destination, without its signing secret (secrets stay out of model context). */
export const notificationSettingsSchema = outputOf(without(S.NotificationSettingsSchema, 'secret'));
export const pageFields = outputShapeOf(without(S.Page(S.EventSummarySchema), 'data'));

// Inputs.
export const limitInput = inputOf(S.PageQuery.limit, 'Items per page, 1–100 (default 20)').optional();
export const cursorInput = inputOf(S.PageQuery.cursor, '`next_cursor` of the previous page').optional();

/** Agent-facing words for the fields an endpoint and its destinations are made and changed with. */
export const ENDPOINT_FIELD_DESCRIPTIONS = {
  name: 'A name to tell endpoints apart, e.g. "stripe-dev"',
  destination: 'Where events go: {"type":"cli"} (they wait for `hook listen`), {"type":"url","url":…} (signed POSTs to that http(s) URL), or a broker: {"type":"amqp","url","exchange","routing_key"}, {"type":"nats","url","subject"}, {"type":"redis","url","stream"}, {"type":"mqtt","url","topic"}',
  transformation: 'Reshapes each event before delivery (headers, body, path, query; context.setType sets the event type): {"code": "<JavaScript registering addHandler(\'transform\', (request, context) => request)>"}. null removes it',
  filter: 'Which events are delivered: {body?, headers?, query?, path?} with plain values (equality), nested objects, and $eq $neq $gt $gte $lt $lte $in $nin $startsWith $endsWith $exist $and $or $not. Others are stored as status filtered. null removes it',
  verification: 'Check senders\' signatures at the ingest URL (docs/sources.md): provider (\'hmac\' is a generic HMAC described by header, algorithm, encoding, prefix, signed, timestamp_header), secret (write-only), mode reject (default: a failing request gets 401 and is not stored) or flag. null turns it off',
  response: 'Answer each stored request with this instead of {"id","status"} (docs/sources.md, Custom responses): status 200–299, headers (content-type text/plain, application/json, application/xml or text/xml; cache-control, expires, pragma, etag, last-modified, content-language, retry-after; x-* names but x-hook-* and browser-acted ones), body ({{event_id}} becomes the stored event\'s id). null restores the default',
  handshake: 'Answer a provider\'s handshake at the ingest URL, stored but not delivered (docs/sources.md, Handshakes); secret: meta\'s verify token, zoom\'s secret token, twitter\'s consumer secret. null turns it off',
  dedupe: 'Drop duplicates at ingest (docs/sources.md, Duplicates): {"header": "X-GitHub-Delivery"} (or webhook-id, X-Shopify-Event-Id, Idempotency-Key) or {"json_field": "id"} (Stripe; event_id for Slack, data.id nested). A request whose key the endpoint already stored is answered {"id": <original event id>, "status": "duplicate"} and not stored, delivered or counted again. null turns it off',
  rate_per_second: 'Most deliveries started per second (1–10000); null: no limit',
  max_in_flight: 'Most deliveries in flight at once (1–1000); null: the relay\'s per-destination share',
  status: 'active delivers; paused holds deliveries until active again; disabled stops them',
} as const;
