import type { Readable, Writable } from 'node:stream';
import { defineCommand } from '../command.ts';
import packageJson from '../../package.json' with { type: 'json' };

export default defineCommand<[], object>({
  path: ['mcp'],
  summary: 'Run an MCP server on stdin/stdout for agents (the same tools as the relay\'s /mcp)',
  description:
    'Serve the Model Context Protocol over stdio: an MCP client (an agent, an editor) starts `hook mcp` and calls its tools, ' +
    'which act on the relay and account this command line is configured for (--api-url, --api-key, --profile, HOOK_API_URL, HOOK_API_KEY).\n' +
    'stdout carries nothing but MCP messages; notes go to stderr. With no API key configured, a sign_up tool is offered; ' +
    'the key it creates is saved in the profile, as `hook signup` does, and the other tools use it at once.\n' +
    'It runs until the client closes stdin. Tools: docs/agents.md.',
  examples: [
    ['hook mcp', 'serve MCP on stdio for the default profile'],
    ['hook mcp --profile prod', 'the same against profile "prod"'],
  ],
  async run(context) {
    const { settings, config, out } = context;
    const [{ createHookMcpServer }, { StdioServerTransport }] = await Promise.all([
      import('@hook/mcp'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
    ]);
    const server = createHookMcpServer({
      apiUrl: settings.apiUrl,
      apiKey: settings.apiKey,
      userAgent: `hook-cli/${packageJson.version} (mcp)`,
      onSignUp(signup) {
        config.saveProfile(settings.profile, { api_url: settings.apiUrl, api_key: signup.api_key });
        out.note(`hook mcp: signed up as ${signup.account.id}; saved the API key in profile '${settings.profile}' (${config.path}).`);
      },
    });
    const stdin = context.stdin as Readable;
    const ended = new Promise<void>((resolve) => {
      stdin.once('end', resolve);
      stdin.once('close', resolve);
    });
    await server.connect(new StdioServerTransport(stdin, out.protocolStream() as Writable));
    out.note(
      `hook mcp: serving MCP on stdio against ${settings.apiUrl}` +
        (settings.apiKey === undefined ? ' with no API key (sign_up is offered)' : ` (profile '${settings.profile}', key from ${settings.apiKeySource})`),
    );
    await ended;
    await server.close();
  },
});
