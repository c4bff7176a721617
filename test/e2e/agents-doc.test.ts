/**
 * docs/agents.md promises three runnable examples (MCP over HTTP with curl, `hook --json`,
 * REST only). This runs each `sh` block of that page with bash against a real relay with a
 * delivery worker, the relay's address put in place of the documented 127.0.0.1:8080,
 * and checks what each prints against what the page says it prints. `jq` there is the real
 * jq compiled to WebAssembly (support/bin/jq, from npm), so no jq need be installed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const SUPPORT_BIN = resolve(import.meta.dirname, '..', 'support', 'bin');
const PAGE = readFileSync(join(REPO_ROOT, 'docs', 'agents.md'), 'utf8');
const SCRIPTS = [...PAGE.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

let relay: TestRelay;
let home: string;

beforeAll(async () => {
  relay = await startTestRelay({}, { workerPollMs: 50 });
  home = mkdtempSync(join(tmpdir(), 'hook-agents-doc-'));
});
afterAll(async () => {
  await relay.close();
  rmSync(home, { recursive: true, force: true });
});

function runScript(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = execFile('bash', ['-euo', 'pipefail', '-c', script.replaceAll('http://127.0.0.1:8080', relay.baseUrl)], {
      cwd: REPO_ROOT,
      env: { PATH: `${SUPPORT_BIN}:${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, HOME: home, XDG_CONFIG_HOME: join(home, 'config') },
      timeout: 60_000,
    }, (error, stdout, stderr) => resolvePromise({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
    child.stdin?.end();
  });
}

/** The JSON values a script printed (jq may spread one over several lines). */
function printedValues(stdout: string): unknown[] {
  const values: unknown[] = [];
  let buffer = '';
  for (const line of stdout.split('\n')) {
    buffer += `${line}\n`;
    try {
      values.push(JSON.parse(buffer));
      buffer = '';
    } catch {
      // not a whole value yet
    }
  }
  return values;
}

describe('docs/agents.md examples', () => {
  it('has the three runnable examples: MCP, hook --json and REST', () => {
    expect(SCRIPTS).toHaveLength(3);
    expect(SCRIPTS[0]).toContain('/mcp');
    expect(SCRIPTS[1]).toContain('hook signup --json');
    expect(SCRIPTS[2]).toContain('/v1/events/replay/');
  });

  it('runs them with the jq from npm, not one the machine must have', async () => {
    const result = await runScript('command -v jq; echo \'{"a": [1, 2]}\' | jq -c \'.a | map(. * 2)\'');
    expect(result.stdout.split('\n')).toEqual([join(SUPPORT_BIN, 'jq'), '[2,4]', '']);
  });

  it.each([
    ['MCP over HTTP', 0],
    ['hook --json', 1],
    ['REST', 2],
  ])('the %s example provisions, waits for a failed delivery and replays it', async (_name, index) => {
    const result = await runScript(SCRIPTS[index]!);
    expect(result.code, result.stderr).toBe(0);
    const values = printedValues(result.stdout);
    const failed = values.find((value): value is { status: string; attempts: { n: number; error: string }[] } => (value as { status?: string }).status === 'retrying');
    expect(failed?.attempts[0]).toMatchObject({ n: 1, error: expect.stringContaining('ECONNREFUSED') });
    expect(values).toContainEqual({ status: 'delivered', last: { n: 2, trigger: 'replay', response_status: 200 } });
    // Each example ends by showing an error with its code.
    expect(result.stdout + result.stderr).toContain('endpoint_not_found');
  }, 90_000);
});
