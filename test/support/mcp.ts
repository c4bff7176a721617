/** Reading Hook's MCP tool results in tests. */
import { TOOL_ERROR_META_KEY, type ToolErrorContent } from '@hook/mcp';

interface ToolResult {
  isError?: boolean;
  content?: unknown;
  structuredContent?: unknown;
  _meta?: Record<string, unknown>;
}

/**
 * The problem of a tool error, read from its text (the JSON second item) and checked to
 * be the same in `_meta`; throws when the result is not an error or they differ.
 */
export function toolError(result: ToolResult): ToolErrorContent['error'] & { text: string } {
  if (result.isError !== true) throw new Error(`expected a tool error, got ${JSON.stringify(result)}`);
  const content = result.content as Array<{ type: string; text: string }>;
  const fromText = (JSON.parse(content[1]!.text) as ToolErrorContent).error;
  const fromMeta = result._meta?.[TOOL_ERROR_META_KEY];
  if (JSON.stringify(fromMeta) !== JSON.stringify(fromText)) throw new Error(`_meta and text disagree: ${JSON.stringify(result)}`);
  return { ...fromText, text: content[0]!.text };
}
