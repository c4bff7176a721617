/**
 * Tool errors point an agent at tools, not at HTTP routes it cannot call: every relay
 * code whose registry fix names a route has MCP words (or no tool can meet it), and no
 * fix a tool error can carry names a route.
 */
import { allErrors } from '@hook/core';
import { describe, expect, it } from 'vitest';
import { CODES_NO_TOOL_MEETS, HOOK_TOOLS, HTTP_ROUTE, MCP_ERROR_FIXES } from '../src/index.ts';

describe('MCP error fixes', () => {
  it('replace every registry fix that names an HTTP route, for the codes a tool can meet', () => {
    const routed = allErrors().filter((definition) => HTTP_ROUTE.test(definition.fix)).map((definition) => definition.code);
    expect(routed.length).toBeGreaterThan(10);
    expect(routed.filter((code) => !(code in MCP_ERROR_FIXES) && !(code in CODES_NO_TOOL_MEETS))).toEqual([]);
  });

  it('name no HTTP route, and every tool they name exists', () => {
    const tools = new Set(HOOK_TOOLS.map((tool) => tool.name));
    for (const [code, fix] of Object.entries(MCP_ERROR_FIXES)) {
      expect(fix, code).not.toMatch(HTTP_ROUTE);
      for (const named of fix.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? []) {
        if (/^(?:allowed_ips|custom_domain|api_key|next_cursor)$/.test(named)) continue;
        expect(tools.has(named), `${code} names ${named}`).toBe(true);
      }
    }
  });

  it('are keyed by codes the registry has (or the tools\' own ambiguous_endpoint_name)', () => {
    const codes = new Set(allErrors().map((definition) => definition.code));
    expect(Object.keys(MCP_ERROR_FIXES).filter((code) => !codes.has(code) && code !== 'ambiguous_endpoint_name')).toEqual([]);
  });
});
