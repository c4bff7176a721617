/**
 * Rate limits across relay processes (issue 20, item 2): two relay processes on one
 * PostgreSQL share every limit's count, so a key gets its per-minute limit once, not once
 * per process, and one client address gets its signups per hour once. Requests alternate
 * between the processes (and, in the second test, race each other).
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';

const API_LIMIT = 6;
const SIGNUP_LIMIT = 4;
const children: ChildProcess[] = [];
let database: TestDatabase;
let relays: RelayProcess[];

beforeAll(async () => {
  database = await freshDatabase();
  const env = { HOOK_ROLE: 'api', HOOK_API_RATE_LIMIT: String(API_LIMIT), HOOK_SIGNUP_RATE_LIMIT: String(SIGNUP_LIMIT) };
  relays = await Promise.all([startRelayProcess(database.url, env), startRelayProcess(database.url, env)]);
  children.push(...relays.map((relay) => relay.child));
}, 60_000);
afterAll(async () => {
  await stopRelayProcesses(children);
  await database?.drop();
});

interface Answer {
  status: number;
  code?: string;
  detail?: string;
  limit: string | null;
  remaining: string | null;
  reset: string | null;
  retryAfter: string | null;
}

async function send(relay: RelayProcess, method: string, path: string, key?: string): Promise<Answer & { body: any }> {
  const response = await fetch(`${relay.baseUrl}${path}`, { method, headers: key ? { authorization: `Bearer ${key}` } : {} });
  const body = await response.json() as any;
  return {
    status: response.status,
    code: body?.code,
    detail: body?.detail,
    body,
    limit: response.headers.get('ratelimit-limit'),
    remaining: response.headers.get('ratelimit-remaining'),
    reset: response.headers.get('ratelimit-reset'),
    retryAfter: response.headers.get('retry-after'),
  };
}

describe('two relay processes on one database', () => {
  const keys: string[] = [];

  it('allow one client address its signups per hour once, whichever process it asks', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < SIGNUP_LIMIT + 2; i++) {
      const answer = await send(relays[i % 2]!, 'POST', '/v1/accounts');
      answers.push(answer);
      if (answer.status === 201) keys.push(answer.body.api_key);
    }
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 429, 429]);
    expect(answers.map((answer) => answer.remaining)).toEqual(['3', '2', '1', '0', '0', '0']);
    for (const refused of answers.slice(SIGNUP_LIMIT)) {
      expect(refused.code).toBe('rate_limited');
      expect(refused.detail).toContain(`allows ${SIGNUP_LIMIT} requests per client address per hour`);
      expect(Number(refused.retryAfter)).toBeGreaterThan(3500);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(3600);
      expect(refused.reset).toBe(refused.retryAfter);
    }
  });

  it('give a key its per-minute limit once over requests alternated between them', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 2 * API_LIMIT; i++) answers.push(await send(relays[i % 2]!, 'GET', '/v1/endpoints', keys[0]));
    expect(answers.map((answer) => answer.status)).toEqual([...Array(API_LIMIT).fill(200), ...Array(API_LIMIT).fill(429)]);
    // One count: each process's answer continues the other's.
    expect(answers.slice(0, API_LIMIT).map((answer) => answer.remaining)).toEqual(['5', '4', '3', '2', '1', '0']);
    for (const answer of answers) {
      expect(answer.limit).toBe(String(API_LIMIT));
      expect(Number(answer.reset)).toBeGreaterThan(0);
      expect(Number(answer.reset)).toBeLessThanOrEqual(60);
    }
    for (const refused of answers.slice(API_LIMIT)) {
      expect(refused.code).toBe('rate_limited');
      expect(refused.detail).toContain(`allows ${API_LIMIT} requests per API key per minute`);
      expect(refused.remaining).toBe('0');
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
      expect(refused.reset).toBe(refused.retryAfter);
    }
    // Another key's budget is its own.
    const other = await send(relays[1]!, 'GET', '/v1/account', keys[1]);
    expect([other.status, other.remaining]).toEqual([200, String(API_LIMIT - 1)]);
  });

  it('let exactly the limit through when a key\'s requests race on both processes at once', async () => {
    const answers = await Promise.all(Array.from({ length: 4 * API_LIMIT }, (_, i) => send(relays[i % 2]!, 'GET', '/v1/endpoints', keys[2])));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(API_LIMIT);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(3 * API_LIMIT);
    expect(answers.filter((answer) => answer.status === 200).map((answer) => answer.remaining).sort()).toEqual(['0', '1', '2', '3', '4', '5']);
  });
});
