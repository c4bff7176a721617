/**
 * What one tool module exports, and how a tool's outcome becomes an MCP result: a
 * structured result (checked against the output schema) plus a short text for clients
 * that read only text; API and network failures become tool errors (`isError: true`)
 * that carry the relay's problem `code`, `detail` and `fix`, so an agent can act on them.
 *
 * An error carries no `structuredContent`: SDK clients check any structured content
 * against the tool's output schema, error or not, and an error is not shaped like a
 * result. Its problem goes in the text instead (a readable line, then the JSON) and in
 * `_meta["hook/error"]`.
 */
import { HookApiError, HookNetworkError, type HookClient } from '@hook/client';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { mcpFixFor } from './fixes.ts';

/**
 * A schema's output type without the index signatures of loose objects, so the client's
 * declared types (Endpoint, Event, …) fit it; the SDK still checks the value itself.
 */
export type KnownFields<T> = T extends readonly (infer Item)[]
  ? KnownFields<Item>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: KnownFields<T[K]> }
    : T;

export interface ToolOutcome<Output> {
  /** The structured result; must match the tool's output schema. */
  result: Output;
  /** One or two lines saying what happened, for the text content. */
  summary: string;
}

export interface HookTool<Input extends z.ZodRawShape = z.ZodRawShape, Output extends z.ZodRawShape = z.ZodRawShape> {
  /** snake_case, verb first: `create_endpoint`. */
  readonly name: string;
  readonly title: string;
  /** What it does and when to use it, for the model choosing a tool. */
  readonly description: string;
  readonly input: Input;
  readonly output: Output;
  readonly annotations?: ToolAnnotations;
  /** `without_key`: offered only when the server has no API key (sign_up). Default `with_key`. */
  readonly availability?: 'with_key' | 'without_key';
  /** The input that is the REST route's `{id}` (`endpoint_id`), so a validation error names it instead of `params.id`. */
  readonly pathId?: string;
  run(client: HookClient, input: z.infer<z.ZodObject<Input>>): Promise<ToolOutcome<KnownFields<z.infer<z.ZodObject<Output>>>>>;
}

/** Declares a tool with its types inferred from its schemas. */
export function defineTool<Input extends z.ZodRawShape, Output extends z.ZodRawShape>(tool: HookTool<Input, Output>): HookTool<Input, Output> {
  return tool;
}

/** The JSON of every tool error (its second text item, and `_meta["hook/error"]`). */
export interface ToolErrorContent {
  error: {
    /** The relay's problem code (docs/errors.md), or `relay_unreachable`. */
    code: string;
    status: number | null;
    title: string;
    detail: string;
    /** How to fix it. */
    fix: string;
    errors?: Array<{ field: string; message: string }>;
    request_id?: string;
  };
}

/**
 * A refusal the tool itself decides before calling the relay (an endpoint name that
 * matches no endpoint, or several), carried like a relay problem; `code` is the relay's
 * for the same case where there is one.
 */
export class ToolRefusal extends Error {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly fix: string;

  constructor(code: string, status: number, title: string, detail: string, fix: string) {
    super(detail);
    this.name = 'ToolRefusal';
    this.code = code;
    this.status = status;
    this.title = title;
    this.fix = fix;
  }
}

/** Where a tool error's problem sits in `_meta`. */
export const TOOL_ERROR_META_KEY = 'hook/error';

export function successResult(outcome: ToolOutcome<object>): CallToolResult {
  return {
    content: [{ type: 'text', text: `${outcome.summary}\n${JSON.stringify(outcome.result)}` }],
    structuredContent: outcome.result as Record<string, unknown>,
  };
}

/**
 * A REST field name as the tool's input names it: `params.id` is the tool's `pathId`
 * input, and `body.name` / `query.limit` are the inputs `name` / `limit` (tool inputs
 * take the request's field names).
 */
function inputNameOf(field: string, tool: Pick<HookTool, 'pathId'> | undefined): string {
  if (field === 'params.id' && tool?.pathId) return tool.pathId;
  return field.replace(/^(?:body|query)\./, '');
}

/**
 * A failure as an MCP tool error, in the words of `tool` when given: field names are its
 * inputs' and the fix names tools (fixes.ts). Anything that is neither an API nor a
 * network error is a bug and is rethrown.
 */
export function errorResult(error: unknown, tool?: Pick<HookTool, 'pathId'>): CallToolResult {
  let content: ToolErrorContent;
  if (error instanceof HookApiError) {
    const { problem } = error;
    const fields = (problem.errors ?? []).map(({ field, message }) => ({ field: inputNameOf(field, tool), message, rest: field }));
    // The relay's detail repeats the field names ("params.id must be …"): the same renaming there.
    const detail = fields.reduce((text, { rest, field }) => text.split(rest).join(field), problem.detail);
    content = {
      error: {
        code: problem.code,
        status: problem.status,
        title: problem.title,
        detail,
        fix: mcpFixFor(problem.code, problem.fix),
        ...(fields.length ? { errors: fields.map(({ field, message }) => ({ field, message })) } : {}),
        request_id: problem.request_id,
      },
    };
  } else if (error instanceof ToolRefusal) {
    content = { error: { code: error.code, status: error.status, title: error.title, detail: error.message, fix: mcpFixFor(error.code, error.fix) } };
  } else if (error instanceof HookNetworkError) {
    content = {
      error: {
        code: 'relay_unreachable',
        status: null,
        title: 'Relay unreachable',
        detail: error.message,
        fix: `Check that the relay at ${error.url} is running and that the API URL is right (hook mcp: --api-url, HOOK_API_URL or the profile).`,
      },
    };
  } else {
    throw error;
  }
  const { code, detail, fix, errors } = content.error;
  const lines = [`Error ${code}: ${detail}`, ...(errors ?? []).map((field) => `  ${field.field}: ${field.message}`), `Fix: ${fix}`];
  return {
    isError: true,
    content: [
      { type: 'text', text: lines.join('\n') },
      { type: 'text', text: JSON.stringify(content) },
    ],
    _meta: { [TOOL_ERROR_META_KEY]: content.error },
  };
}
