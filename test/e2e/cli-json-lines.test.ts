/**
 * The JSON lines of `hook listen --json` and `hook events tail --json` against their
 * field tables in docs/cli.md: the `connection` lines on stderr (every state and variant
 * the table names: waiting for the relay at start, connecting, open, reconnecting, open
 * after a reconnect, stopping, closed, closed after a fatal error) and tail's
 * `event.received` (live and caught up) and `attempt.finished` lines on stdout. Each real
 * line has exactly the fields its table gives it, and every kind of line the tables
 * describe is produced and checked.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser, repoRoot } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { freePort, startHook, stopAllHookProcesses, type HookProcess } from '../support/hook-process.ts';
import { RelayProcesses, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';

const cliDoc = readFileSync(`${repoRoot}docs/cli.md`, 'utf8');

interface DocumentedField {
  name: string;
  /** Connection table: the lines (state and variant) that have it; undefined: every line of the type. */
  inLines?: Array<{ state: string; variant?: string }>;
  /** Message tables: a field whose description starts "Only …" is there on some lines only. */
  optional: boolean;
}

/** The rows of the table whose header is `| \`<type>\` field |`. */
function fieldTable(type: string): DocumentedField[] {
  const lines = cliDoc.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`| \`${type}\` field |`));
  expect(start, `docs/cli.md has a "${type}" field table`).toBeGreaterThan(-1);
  const fields: DocumentedField[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());
    const names = [...cells[0]!.matchAll(/`([\w.]+)`/g)].map((match) => match[1]!);
    const connection = cells.length === 3;
    const inLines = connection && cells[1] !== 'every line'
      ? [...cells[1]!.matchAll(/`(\w+)`(?: \(?(after a reconnect|after a fatal error|waiting|abandoning)\)?)?/g)].map((match) => ({ state: match[1]!, variant: match[2] }))
      : undefined;
    for (const name of names) fields.push({ name, inLines, optional: !connection && /^Only /.test(cells[1]!) });
  }
  return fields;
}

/** A connection line's variant, in the table's words. */
function variantOf(line: Record<string, unknown>): string | undefined {
  if (line.state === 'open' && line.reconnected === true) return 'after a reconnect';
  if (line.state === 'closed' && 'code' in line) return 'after a fatal error';
  if (line.state === 'stopping') return 'abandoned' in line ? 'abandoning' : 'waiting';
  return undefined;
}

/** The fields of a line as the tables name them: objects the table describes field by field (`event.id`) are opened. */
function fieldsOf(line: Record<string, unknown>, documented: readonly DocumentedField[]): string[] {
  return Object.entries(line).flatMap(([key, value]) =>
    value !== null && typeof value === 'object' && documented.some((field) => field.name.startsWith(`${key}.`)) ? Object.keys(value).map((inner) => `${key}.${inner}`) : [key],
  );
}

const user = new HookUser();
const relays = new RelayProcesses();
let database: TestDatabase;
let portA: number;
let relayA: RelayProcess;
let relayB: RelayProcess;
/** The local server listen forwards to: answers at once, except on /slow (never, so Ctrl-C finds it in flight). */
let local: Server;
let localPort: number;

function startRelay(port: number): Promise<RelayProcess> {
  return relays.start(database.url, port);
}

async function ingest(relay: RelayProcess, endpointUrl: string, suffix = '/'): Promise<string> {
  const response = await fetch(`${relay.baseUrl}${new URL(endpointUrl).pathname}${suffix}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"json.lines"}' });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

function stderrJson(hook: HookProcess): Array<Record<string, unknown>> {
  return hook.stderrLines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`a stderr line of a --json run is not JSON: ${JSON.stringify(line)}\n${hook.transcript()}`);
    }
  });
}

beforeAll(async () => {
  database = await freshDatabase();
  portA = await freePort();
  [relayA, relayB] = await Promise.all([startRelay(portA), startRelay(await freePort())]);
  await user.json(['signup', '--api-url', relayA.baseUrl]);
  await user.json(['account', 'plan', 'pro']);
  local = createServer((request, response) => {
    if (request.url?.startsWith('/slow')) return; // never answers
    request.resume().on('end', () => response.end('ok'));
  });
  await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
  localPort = (local.address() as AddressInfo).port;
});

afterAll(async () => {
  await stopAllHookProcesses();
  await relays.stopAll();
  local?.closeAllConnections();
  await new Promise((resolve) => local?.close(resolve));
  await database?.drop().catch(() => undefined);
  user.remove();
});

describe('docs/cli.md field tables against real --json output', () => {
  it('every connection line of listen and tail, and every tail line, has exactly its documented fields; every documented kind of line occurs', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'json-lines']);
    await user.json(['endpoints', 'create', 'json-lines-doomed']);
    await user.json(['endpoints', 'use', 'json-lines']);

    // Relay down at start: both wait for it.
    await stopRelayProcesses([relayA.child]);
    const listen = startHook(user, ['listen', String(localPort), '--endpoint', 'json-lines', '--json']);
    const tail = startHook(user, ['events', 'tail', '--json']);
    await listen.waitForStderr((line) => line.includes('"waiting_for_relay"'));
    await tail.waitForStderr((line) => line.includes('"waiting_for_relay"'));
    relayA = await startRelay(portA);
    await listen.waitForJson((line) => line.type === 'ready', 30_000);
    await tail.waitForStderr((line) => line.includes('"state":"open"'), 30_000);
    const doomed = startHook(user, ['events', 'tail', '--endpoint', 'json-lines-doomed', '--json']);
    await doomed.waitForStderr((line) => line.includes('"state":"open"'));

    // Live lines: an event, and the attempt listen makes of it.
    const live = await ingest(relayA, endpoint.url);
    await tail.waitForJson((line) => line.type === 'attempt.finished' && line.event_id === live);

    // An outage with an event meanwhile (taken by the other relay process).
    await stopRelayProcesses([relayA.child]);
    await listen.waitForStderr((line) => line.includes('"reconnecting"'));
    await tail.waitForStderr((line) => line.includes('"reconnecting"'));
    const missed = await ingest(relayB, endpoint.url);
    relayA = await startRelay(portA);
    await listen.waitForStderr((line) => line.includes('"reconnected":true'), 30_000);
    await tail.waitForJson((line) => line.type === 'event.received' && line.missed === true && line.event.id === missed, 30_000);

    // A session that cannot recover.
    expect((await user.run(['endpoints', 'delete', 'json-lines-doomed'])).code).toBe(0);
    expect((await doomed.exited).code).toBe(1);

    // Ctrl-C with a delivery in flight: stopping (waiting, then abandoning), closed.
    // Watched for before it is sent: it can reach the local server before the line below is printed.
    const slowArrived = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the slow delivery never reached the local server')), 15_000);
      const onRequest = (request: { url?: string }): void => {
        if (!request.url?.startsWith('/slow')) return;
        clearTimeout(timer);
        local.off('request', onRequest);
        resolve();
      };
      local.on('request', onRequest);
    });
    await ingest(relayA, endpoint.url, '/slow');
    await listen.waitForJson((line) => line.type === 'delivery' && line.event_id === missed);
    await slowArrived;
    expect((await listen.stop('SIGINT', 20_000)).code).toBe(0);
    expect((await tail.stop('SIGINT')).code).toBe(0);

    // Connection lines against their table.
    const connectionFields = fieldTable('connection');
    const seen = new Set<string>();
    for (const hook of [listen, tail, doomed]) {
      const lines = stderrJson(hook).filter((line) => line.type === 'connection');
      for (const line of lines) {
        const variant = variantOf(line);
        seen.add(`${line.state}${variant ? ` ${variant}` : ''}`);
        const applies = connectionFields.filter((field) => !field.inLines || field.inLines.some((entry) => entry.state === line.state && (!entry.variant || entry.variant === variant)));
        expect(fieldsOf(line, connectionFields).sort(), JSON.stringify(line)).toEqual(applies.map((field) => field.name).sort());
      }
    }
    const documentedKinds = new Set(connectionFields.flatMap((field) => field.inLines ?? []).map((entry) => `${entry.state}${entry.variant ? ` ${entry.variant}` : ''}`));
    for (const state of ['connecting', 'open', 'closed']) documentedKinds.add(state);
    expect([...documentedKinds].filter((kind) => !seen.has(kind)), `connection lines seen: ${[...seen].join(', ')}`).toEqual([]);
    // The fatal one comes right before the error itself, which names the same code.
    const doomedLines = stderrJson(doomed);
    expect(doomedLines.at(-2)).toMatchObject({ type: 'connection', state: 'closed', code: 'endpoint_not_found' });
    expect(doomedLines.at(-1)).toMatchObject({ code: 'endpoint_not_found', fix: expect.stringContaining('hook endpoints list') });
    expect(stderrJson(listen).find((line) => line.reconnected === true)).toMatchObject({ missed: 1, missed_more: false, down_for_ms: expect.any(Number) });

    // Tail's stdout lines against theirs.
    const kinds = new Set<string>();
    for (const line of tail.jsonLines() as Array<Record<string, unknown>>) {
      const documented = fieldTable(String(line.type));
      kinds.add(`${line.type}${line.missed ? ' missed' : ''}`);
      const fields = fieldsOf(line, documented);
      expect(fields.filter((field) => !documented.some((entry) => entry.name === field)), JSON.stringify(line)).toEqual([]);
      expect(documented.filter((entry) => !entry.optional && !fields.includes(entry.name)).map((entry) => entry.name), JSON.stringify(line)).toEqual([]);
    }
    expect([...kinds].sort()).toEqual(['attempt.finished', 'event.received', 'event.received missed']);
  }, 120_000);
});
