/**
 * docs/agents.md's tool table is the list an agent's developer reads: it names every tool
 * tools/list serves (a real SDK client, every tool offered), no other, each with the REST
 * operation rest-coverage.ts ties it to.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { expect, it } from 'vitest';
import { createHookMcpServer, REST_ROUTE_COVERAGE } from '../src/index.ts';

/** `| \`tool\` | \`METHOD /path\` | … |` rows of the table under "### The tools". */
function documentedTools(): Map<string, string> {
  const doc = readFileSync(new URL('../../../docs/agents.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('### The tools'), doc.indexOf('\n### ', doc.indexOf('### The tools') + 1));
  const rows = [...section.matchAll(/^\| `([a-z_]+)` \| `([A-Z]+ [^`]+)` \|/gm)];
  return new Map(rows.map(([, tool, operation]) => [tool!, operation!]));
}

it('docs/agents.md lists exactly the tools tools/list serves, each with its REST operation', async () => {
  const server = createHookMcpServer({ apiUrl: 'http://127.0.0.1:9' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'agents-doc-test', version: '0' });
  await client.connect(clientSide);
  const served = (await client.listTools()).tools.map((tool) => tool.name);
  await client.close();

  const documented = documentedTools();
  expect(served.filter((name) => !documented.has(name)), 'served but not in docs/agents.md').toEqual([]);
  expect([...documented.keys()].filter((name) => !served.includes(name)), 'in docs/agents.md but not served').toEqual([]);
  for (const [tool, operation] of documented) {
    const coverage = REST_ROUTE_COVERAGE[operation];
    expect(coverage && 'tool' in coverage ? coverage.tool : undefined, `${tool}: ${operation}`).toBe(tool);
  }
});
