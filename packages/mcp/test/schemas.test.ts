/**
 * The tools' schemas are the REST API's (@hook/core/schemas), not a second copy: what
 * tools/list gives a real MCP client has the fields, required fields and enums of the core
 * schema, and every resource a tool returns is made from one.
 */
import * as S from '@hook/core/schemas';
import type { TSchema } from '@hook/core/schemas';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHookMcpServer, HOOK_TOOLS } from '../src/index.ts';
import { coreSchemaOf, endpointSchema } from '../src/schemas.ts';

type Json = Record<string, unknown>;

/**
 * A JSON Schema's shape: its fields, which are required, their types, items, enums and
 * alternatives. Descriptions, value checks and how loose an object is are left out (the
 * tools' schemas leave value checks to the relay and outputs let extra fields pass).
 */
function shape(node: unknown): unknown {
  if (node === true || node === undefined) return 'any';
  if (node === null || typeof node !== 'object') return node;
  const schema = node as Json;
  const out: Json = {};
  if (schema.anyOf) {
    const options = (schema.anyOf as unknown[]).map(shape);
    return { anyOf: options.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))) };
  }
  if (Array.isArray(schema.type)) return shape({ anyOf: (schema.type as string[]).map((type) => ({ ...schema, type })) });
  if (schema.enum) return { enum: [...(schema.enum as unknown[])].sort() };
  if ('const' in schema) return { const: schema.const };
  if (schema.type !== undefined) out.type = schema.type;
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties as Json).map(([name, field]) => [name, shape(field)]).sort(([a], [b]) => String(a).localeCompare(String(b))));
    out.required = [...((schema.required as string[] | undefined) ?? [])].sort();
  }
  if (schema.items) out.items = shape(schema.items);
  // A record: TypeBox writes patternProperties, zod additionalProperties.
  const values = (schema.patternProperties as Json | undefined)?.['^.*$'] ?? schema.additionalProperties;
  if (values && typeof values === 'object' && Object.keys(values).length > 0) out.values = shape(values);
  if (Object.keys(out).length === 0) return 'any';
  return out;
}

/** A core object schema as a tool's whole input or output: its fields, each one's shape. */
function fieldsOf(schema: TSchema, without: string[] = []): unknown {
  const json = JSON.parse(JSON.stringify(schema)) as Json;
  const properties = Object.fromEntries(Object.entries(json.properties as Json).filter(([name]) => !without.includes(name)));
  return shape({ type: 'object', properties, required: ((json.required as string[]) ?? []).filter((name) => !without.includes(name)) });
}

let tools: Map<string, Tool>;
let client: Client;

beforeAll(async () => {
  const server = createHookMcpServer({ apiUrl: 'http://127.0.0.1:9', apiKey: 'hk_unused' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'schemas-test', version: '0' });
  await client.connect(clientSide);
  tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
});

afterAll(async () => {
  await client?.close();
});

function output(tool: string, field?: string): unknown {
  const schema = tools.get(tool)!.outputSchema as Json;
  return shape(field === undefined ? schema : (schema.properties as Json)[field]);
}

function input(tool: string, without: string[] = []): unknown {
  const schema = tools.get(tool)!.inputSchema as Json;
  return fieldsOf({ ...schema, properties: schema.properties ?? {}, required: schema.required ?? [] } as unknown as TSchema, without);
}

describe('MCP tool schemas', () => {
  it('give in tools/list the fields, required fields and enums of the core resource schemas', () => {
    expect(output('get_endpoint', 'endpoint')).toEqual(shape(S.EndpointSchema));
    expect(output('update_endpoint', 'endpoint')).toEqual(shape(S.EndpointSchema));
    expect(output('add_destination', 'destination')).toEqual(shape(S.DestinationSchema));
    expect(output('list_destinations', 'data')).toEqual({ type: 'array', items: shape(S.DestinationSchema) });
    expect(output('get_event', 'event')).toEqual(shape(S.EventSchema));
    expect(output('list_events', 'data')).toEqual({ type: 'array', items: shape(S.EventSummarySchema) });
    expect(output('list_members', 'data')).toEqual({ type: 'array', items: shape(S.MemberSchema) });
    expect(output('get_account')).toEqual(fieldsOf(S.AccountDetailsSchema));
    expect(output('add_member')).toEqual(fieldsOf(S.CreatedMemberSchema));
    expect(output('bulk_replay')).toEqual(fieldsOf(S.BulkReplayResultSchema));
    expect(output('test_transformation')).toEqual(fieldsOf(S.TransformationTestResultSchema));
    expect(output('delete_account')).toEqual(fieldsOf(S.AccountDeletedSchema));
    expect(output('replay_event', 'replay')).toEqual({ type: 'array', items: shape(S.ReplayResultSchema) });
    // The notification settings without their signing secret: secrets stay out of model context.
    expect(output('get_notifications', 'notifications')).toEqual(fieldsOf(S.NotificationSettingsSchema, ['secret']));
  });

  it('take in tools/list the fields of the core request schemas', () => {
    expect(input('create_endpoint')).toEqual(fieldsOf(S.EndpointCreateSchema));
    expect(input('update_endpoint', ['endpoint_id'])).toEqual(fieldsOf(S.EndpointUpdateSchema));
    expect(input('add_destination', ['endpoint_id'])).toEqual(fieldsOf(S.DestinationCreateSchema));
    expect(input('update_destination', ['destination_id'])).toEqual(fieldsOf(S.DestinationUpdateSchema));
    expect(input('update_account')).toEqual(fieldsOf(S.AccountUpdateSchema));
    expect(input('bulk_replay')).toEqual(fieldsOf(S.BulkReplayRequestSchema));
    expect(input('test_transformation')).toEqual(fieldsOf(S.TransformationTestRequestSchema));
    expect(input('add_member')).toEqual(fieldsOf(S.MemberCreateSchema));
    expect(input('set_member_role', ['member_id'])).toEqual(fieldsOf(S.MemberUpdateSchema));
    expect(input('list_events')).toEqual(fieldsOf(S.EventListQuery, ['since', 'until', 'q']));
  });

  it('make every object a tool returns from a core schema', () => {
    const handWritten: string[] = [];
    for (const tool of HOOK_TOOLS) {
      for (const [name, field] of Object.entries(tool.output as Record<string, z.ZodType>)) {
        let inner: z.ZodType = field;
        let derived = coreSchemaOf(inner) !== undefined;
        while (!derived && (inner instanceof z.ZodOptional || inner instanceof z.ZodArray)) {
          inner = inner instanceof z.ZodOptional ? inner.unwrap() as z.ZodType : inner.element as z.ZodType;
          derived = coreSchemaOf(inner) !== undefined;
        }
        const json = z.toJSONSchema(inner, { unrepresentable: 'any' }) as Json;
        const isObject = json.type === 'object' || Array.isArray(json.anyOf);
        if (isObject && !derived) handWritten.push(`${tool.name}.${name}`);
      }
    }
    expect(handWritten).toEqual([]);
  });

  it('let extra fields through in outputs and refuse a missing one', () => {
    const at = '2026-01-02T03:04:05.000Z';
    const endpoint = {
      id: 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', name: 'n', url: 'https://relay.example/in/x', status: 'active', destination: { type: 'cli' },
      transformation: null, filter: null, destinations: [], verification: null, response: null, handshake: null, dedupe: null,
      created_at: at, updated_at: at,
    };
    expect(endpointSchema.safeParse({ ...endpoint, added_by_a_newer_relay: 1 }).success).toBe(true);
    const { updated_at: _dropped, ...missing } = endpoint;
    expect(endpointSchema.safeParse(missing).success).toBe(false);
  });
});
