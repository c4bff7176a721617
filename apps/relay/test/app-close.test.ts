/**
 * Closing a relay built by buildApp stops everything it runs, in order and within bounds
 * (app.ts): the worker stops claiming and its deliveries in flight end and are recorded,
 * and each background job's pass in progress is waited for only within its grace (here an
 * alert post to a Slack URL that never answers, which would otherwise hold the close for
 * the post's whole SLACK_TIMEOUT_MS).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SLACK_TIMEOUT_MS } from '@hook/core';
import { createOrm } from '@hook/db';
import { freshDatabase } from '@hook/test/database';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, createEndpoint, sendEvent, signUp, startTestRelay } from '@hook/test/relay';
import { TEST_SECRET_KEY_BYTES } from '@hook/test/secret-key';

const JOB_STOP_GRACE_MS = 300;
const DELIVERY_TIMEOUT_MS = 1500;

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

/** A receiver that takes requests and never answers them (until it is closed). */
async function silentReceiver(): Promise<Receiver> {
  const receiver = await startReceiver(() => ({ status: 200, delayMs: 10 * 60_000 }));
  receivers.push(receiver);
  return receiver;
}

describe('closing a relay', () => {
  it('ends within bounds while a delivery and an alert post are under way, having recorded the delivery', async () => {
    const database = await freshDatabase();
    try {
      const relay = await startTestRelay({ deliveryTimeoutMs: DELIVERY_TIMEOUT_MS }, { database, workerPollMs: 50, jobStopGraceMs: JOB_STOP_GRACE_MS });
      const slack = await silentReceiver();
      const destination = await silentReceiver();
      const { key } = await signUp(relay.baseUrl);
      expect((await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: `${slack.url}/services/T000/B000/secretpart` } })).status).toBe(200);
      expect((await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key })).status).toBe(200);
      const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'silent', destination: { type: 'url', url: destination.url } });
      const eventId = await sendEvent(endpoint.url, '{"n":1}');
      // The alert sender's pass is posting, and the worker's delivery is waiting for its answer.
      await Promise.all([slack.waitFor(1), destination.waitFor(1)]);

      const started = performance.now();
      await relay.close();
      const tookMs = performance.now() - started;
      // The delivery ends by its time limit, and the alert post is left after the grace (the
      // jobs stop while the worker drains). Waited for, the post would hold the close for up
      // to SLACK_TIMEOUT_MS (10 s; about 9.8 s measured with a 60 s grace).
      expect(SLACK_TIMEOUT_MS).toBeGreaterThan(DELIVERY_TIMEOUT_MS + 3000);
      expect(tookMs).toBeLessThan(DELIVERY_TIMEOUT_MS + 3000);

      // Drained before the ORM closed: the attempt in flight was recorded (a timeout), not dropped.
      const orm = await createOrm({ databaseUrl: database.url, secretKey: TEST_SECRET_KEY_BYTES });
      try {
        const attempts = await orm.em.fork().getConnection().execute<{ response_status: number | null; error: string | null }[]>('select response_status, error from attempt where event_id = ?', [eventId]);
        expect(attempts).toHaveLength(1);
        expect(attempts[0]!.response_status).toBeNull();
        expect(attempts[0]!.error).toMatch(/no answer within/);
      } finally {
        await orm.close();
      }
    } finally {
      await database.drop();
    }
  });
});
