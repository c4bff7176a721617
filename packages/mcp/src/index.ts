export { createHookMcpServer, HOOK_MCP_SERVER_NAME, HOOK_VERSION, type HookMcpServerOptions } from './server.ts';
export { HOOK_TOOLS } from './tools/index.ts';
export { REST_ROUTE_COVERAGE, PATHS_WITHOUT_TOOLS, type RouteCoverage } from './rest-coverage.ts';
export { defineTool, errorResult, successResult, TOOL_ERROR_META_KEY, type HookTool, type ToolErrorContent, type ToolOutcome } from './tool.ts';
export { HTTP_ROUTE, MCP_ERROR_FIXES, CODES_NO_TOOL_MEETS } from './fixes.ts';
