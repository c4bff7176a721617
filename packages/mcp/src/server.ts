/**
 * The MCP server both transports share (`hook mcp` over stdio, the relay's `/mcp` over
 * Streamable HTTP): every tool in HOOK_TOOLS, each calling the relay's REST API
 * through @hook/client.
 */
import { createHookClient, type HookClient, type Signup } from '@hook/client';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { errorResult, successResult, type HookTool } from './tool.ts';
import { HOOK_TOOLS } from './tools/index.ts';

export const HOOK_MCP_SERVER_NAME = 'hook';

/**
 * What `initialize` reports as serverInfo.version, over both transports: the version of
 * Hook, which is the CLI package's (@hookrelay/cli, the one Hook package with a release
 * version; the relay's is private). A test fails when apps/cli/package.json says otherwise.
 */
export const HOOK_VERSION = '0.1.0';

export type HookMcpServerOptions = (
  | {
      /** A client to call the API with, used as it is (and closed by whoever made it). sign_up is not offered. */
      client: HookClient;
    }
  | {
      /** The relay's base URL. */
      apiUrl: string;
      /** `hk_…`. Without one, sign_up is offered and the other tools answer `authentication_required` until it is used. */
      apiKey?: string;
      /** Sent as User-Agent. */
      userAgent?: string;
      /** Extra headers sent with every API request (the relay's /mcp route vouches for its caller's address with one). */
      headers?: Record<string, string>;
      /** Called after sign_up with the new account and key (`hook mcp` saves the key in the profile). */
      onSignUp?(signup: Signup): void | Promise<void>;
    }
) & {
  /** Tools to serve instead of HOOK_TOOLS (tests). */
  tools?: readonly HookTool<any, any>[];
};

/** A server with every tool registered, ready to `connect` to a transport; closing it closes the clients it made. */
export function createHookMcpServer(options: HookMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: HOOK_MCP_SERVER_NAME, title: 'Hook webhook relay', version: HOOK_VERSION },
    {
      capabilities: { tools: { listChanged: true } },
      instructions:
        'Tools over the Hook webhook relay REST API: create endpoints (receiving URLs), inspect received events and their delivery attempts, replay failures. ' +
        'Errors carry the relay\'s `code` and a `fix` sentence.',
    },
  );
  const owned: HookClient[] = [];
  let client: HookClient;
  let hasKey: boolean;
  let switchToKey: ((apiKey: string) => void) | undefined;
  if ('client' in options) {
    client = options.client;
    hasKey = true;
  } else {
    const make = (apiKey: string | undefined) => {
      const made = createHookClient({ apiUrl: options.apiUrl, apiKey, userAgent: options.userAgent, headers: options.headers });
      owned.push(made);
      return made;
    };
    client = make(options.apiKey);
    hasKey = options.apiKey !== undefined;
    switchToKey = (apiKey: string) => {
      client = make(apiKey);
    };
  }

  const registered = new Map<string, RegisteredTool>();
  for (const tool of options.tools ?? HOOK_TOOLS) {
    const withoutKey = tool.availability === 'without_key';
    if (withoutKey && (hasKey || 'client' in options)) continue;
    const handle = server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: tool.annotations },
      async (input: unknown) => {
        try {
          const outcome = await tool.run(client, input as never);
          const result = outcome.result as Partial<Signup>;
          if (withoutKey && typeof result.api_key === 'string' && !('client' in options)) {
            switchToKey?.(result.api_key);
            await options.onSignUp?.(result as Signup);
            // One account per session: the tool goes away, and clients hear tools/list_changed.
            registered.get(tool.name)?.remove();
          }
          return successResult(outcome);
        } catch (error) {
          return errorResult(error, tool);
        }
      },
    );
    registered.set(tool.name, handle);
  }

  const previousOnClose = server.server.onclose;
  server.server.onclose = () => {
    previousOnClose?.();
    void Promise.allSettled(owned.map((made) => made.close()));
  };
  return server;
}
