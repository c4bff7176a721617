/**
 * `hook events get` of a big body on a real pseudo-terminal: the body the relay accepts
 * at its largest (HOOK_MAX_PAYLOAD, 10 MiB by default) on one line, and a JSON array of
 * 20,000 small objects. A terminal shows the start of the body, how much is left and the
 * command that writes all of it, then the rest of the event; the run exits 0. hook runs
 * with a 150 MB heap (NODE_OPTIONS), so a view whose memory grows with the body fails
 * here (out of memory) instead of only being slow.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { freePort } from '../support/hook-process.ts';
import { RelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { runOnTerminal, stopAllTerminalRuns } from '../support/terminal.ts';

const user = new HookUser();
const relays = new RelayProcesses();
let database: TestDatabase;
let relay: RelayProcess;
let ingestPath: string;

/** What hook runs with: a heap no view of a body needs more of (a 10 MiB body, fetched as JSON, is some 30 MB of it). */
const HEAP_LIMIT = { NODE_OPTIONS: '--max-old-space-size=150' };
const TEN_MIB = 10 * 1024 * 1024;

async function ingest(body: string, contentType: string): Promise<string> {
  const response = await fetch(`${relay.baseUrl}${ingestPath}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

beforeAll(async () => {
  database = await freshDatabase();
  relay = await relays.start(database.url, await freePort());
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['account', 'plan', 'pro']);
  ingestPath = new URL((await user.json(['endpoints', 'create', 'big'])).url).pathname;
});

afterEach(() => stopAllTerminalRuns());

afterAll(async () => {
  await relays.stopAll();
  await database?.drop().catch(() => undefined);
  user.remove();
});

describe('hook events get on a terminal, of a big body', () => {
  it('a 10 MiB body on one line: its start, how much more and how to get it, then the deliveries; exit 0', async () => {
    const id = await ingest('a'.repeat(TEN_MIB - 10) + 'THE-END-XY', 'text/plain');
    const terminal = runOnTerminal(user, ['events', 'get', id], { columns: 100, env: HEAP_LIMIT });
    expect(await terminal.exited, terminal.text()).toBe(0);
    const lines = terminal.lines();
    expect(lines, terminal.text()).toContain('Body (text/plain, 10.0 MiB)');
    const start = lines.indexOf('Body (text/plain, 10.0 MiB)') + 1;
    expect(lines[start]).toMatch(/^a{1000,}$/);
    expect(terminal.raw()).not.toContain('THE-END-XY');
    const note = lines.find((line) => line.startsWith('… '));
    expect(note, terminal.text()).toMatch(new RegExp(`^… [\\d,]+ more bytes \\(10\\.0 MiB in all\\): \`hook events get ${id} --body > body\\.txt\` writes all of it$`));
    const more = Number(/… ([\d,]+) more bytes/.exec(note!)![1]!.replaceAll(',', ''));
    expect(more + lines[start]!.length).toBe(TEN_MIB);
    expect(lines.slice(lines.indexOf(note!)), terminal.text()).toContain('Deliveries');
  });

  it('a 937,805-byte JSON array of 20,000 objects: indented, its first objects, how much more and how to get it; exit 0', async () => {
    const items = Array.from({ length: 20_000 }, (_, n) => ({ id: n, sku: `sku-${String(n).padStart(5, '0')}`, qty: n % 7 }));
    const body = JSON.stringify(items).padEnd(937_805 - 1, ' ') + '\n';
    expect(Buffer.byteLength(body)).toBe(937_805);
    const id = await ingest(body, 'application/json');
    const terminal = runOnTerminal(user, ['events', 'get', id], { columns: 100, env: HEAP_LIMIT });
    expect(await terminal.exited, terminal.text()).toBe(0);
    const lines = terminal.lines();
    const start = lines.indexOf('Body (application/json, 915.8 KiB)') + 1;
    expect(start, terminal.text()).toBeGreaterThan(0);
    expect(lines.slice(start, start + 7)).toEqual(['[', '  {', '    "id": 0,', '    "sku": "sku-00000",', '    "qty": 0', '  },', '  {']);
    expect(terminal.raw()).not.toContain('sku-19999');
    const note = lines.find((line) => line.startsWith('… '));
    expect(note, terminal.text()).toMatch(new RegExp(`^… [\\d,]+ more bytes \\(915\\.8 KiB in all\\): \`hook events get ${id} --body > body\\.json\` writes all of it$`));
    expect(lines.slice(lines.indexOf(note!)), terminal.text()).toContain('Deliveries');
  });
});
