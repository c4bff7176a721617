/**
 * A `hook listen` session hears at once of events another relay process stored: the
 * stream link between processes wakes it to read its backlog, instead of it waiting for
 * its next poll. Both relays share one PostgreSQL; the listening one polls only once a
 * minute here, so only the wake-up can bring the event within the test's wait.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';
import { collectSignals } from '@hook/test/signals';
import { STREAM_PEERS_WATCH_CHANNEL } from '../src/stream/peers.ts';

let listening: TestRelay;
let ingesting: TestRelay;

beforeAll(async () => {
  listening = await startTestRelay({}, { peers: true, listenPollIntervalMs: 60_000 });
  ingesting = await startTestRelay({}, { peers: true, sharing: listening });
});
afterAll(async () => {
  await ingesting?.close();
  await listening?.close();
});

function listen(relay: TestRelay, key: string, endpointId: string): { messages: any[]; socket: WebSocket; opened: Promise<void> } {
  const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?mode=listen&endpoint_id=${endpointId}`, { headers: { authorization: `Bearer ${key}` } });
  const messages: any[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
  return { messages, socket, opened: new Promise((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); }) };
}

function waitFor(what: string, check: () => boolean, timeout = 8000): Promise<void> {
  return vi.waitFor(() => expect(check(), what).toBe(true), { timeout, interval: 20 });
}

describe('listen across relay processes', () => {
  it("offers an event stored by another process at once, not at the next poll", async () => {
    const { key, accountId } = await signUp(listening.baseUrl);
    const endpoint = await createEndpoint(listening.baseUrl, key, { name: 'across' });
    const watches = collectSignals<{ processId: string; accountIds: string[] }>(STREAM_PEERS_WATCH_CHANNEL);
    const session = listen(listening, key, endpoint.id);
    try {
      await session.opened;
      await waitFor('hello', () => session.messages.some((message) => message.type === 'hello'));
      // The other relay learns that this account is watched (the listening relay announces it): only then is an event there sent here.
      await watches.waitFor((watch) => watch.accountIds.includes(accountId));
      const path = new URL(endpoint.url).pathname;
      const id = await sendEvent(`${ingesting.baseUrl}${path}`, '{"from":"the other process"}');
      await waitFor(`a delivery of ${id}`, () => session.messages.some((message) => message.type === 'delivery' && message.event.id === id));
      const delivery = session.messages.find((message) => message.type === 'delivery' && message.event.id === id);
      expect(Buffer.from(delivery.body_base64, 'base64').toString()).toBe('{"from":"the other process"}');
    } finally {
      watches.stop();
      session.socket.terminate();
    }
  });
});
