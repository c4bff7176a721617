/**
 * The forwarder of bench:delivery's ceiling phase: the relay's own send path with no
 * database at all. It signs each body as a delivery is signed (deliveryHeaders) and
 * POSTs it over the relay's DeliverySender (pooled keep-alive undici connections, the
 * answer read), FORWARD_CONCURRENCY at a time, to FORWARD_URL. What it reaches is the
 * most a relay could deliver on this machine if the queue cost nothing.
 *
 * Run as its own process, like the relay. Prints `ready` as its first stdout line, then
 * takes stdin lines:
 *   `go <seconds>`  sends as fast as it can for that long;
 *   `credit <n>`    sends n more (one per event the bench saw acknowledged), never more
 *                   than FORWARD_CONCURRENCY at a time;
 *   `end`           (after credits) finishes what it was given.
 * Then it prints one JSON line `{"sent":…,"ok":…,"seconds":…}` (seconds: from the first
 * send to the last answer) and exits.
 *
 * Environment: FORWARD_URL (required), FORWARD_CONCURRENCY (default the relay's default
 * HOOK_DELIVERY_CONCURRENCY), FORWARD_BODY_BYTES (default 1024).
 */
import { createInterface } from 'node:readline';
import { newId, generateSigningSecret } from '@hook/core';
import { deliveryHeaders } from '../../apps/relay/src/delivery/attempt.ts';
import { DeliverySender } from '../../apps/relay/src/delivery/sender.ts';
import { DEFAULT_DELIVERY_CONCURRENCY } from '../../apps/relay/src/config.ts';
import { jsonBody } from './support.ts';

const url = process.env.FORWARD_URL;
if (!url) throw new Error('FORWARD_URL is required');
const concurrency = Number(process.env.FORWARD_CONCURRENCY ?? DEFAULT_DELIVERY_CONCURRENCY);
const body = jsonBody(Number(process.env.FORWARD_BODY_BYTES ?? 1024));
const secrets = [generateSigningSecret()];
const sender = new DeliverySender({ timeoutMs: 15_000, allowPrivateDestinations: true });

/** One delivery: signed like the relay signs it, sent over its sender; whether it was answered 2xx. */
async function sendOne(): Promise<boolean> {
  const id = newId('event');
  const headers = deliveryHeaders({ id, headers: { 'content-type': 'application/json' }, body, secrets, attemptCount: 0 }, Math.floor(Date.now() / 1000));
  const result = await sender.send(url!, headers, body);
  return result.status !== null && result.status >= 200 && result.status < 300;
}

interface Tally {
  sent: number;
  ok: number;
  seconds: number;
}

/** As fast as it can for `seconds`. */
async function forwardFor(seconds: number): Promise<Tally> {
  const started = performance.now();
  const endAt = started + seconds * 1000;
  let sent = 0;
  let ok = 0;
  const lane = async (): Promise<void> => {
    while (performance.now() < endAt) {
      sent++;
      if (await sendOne()) ok++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { sent, ok, seconds: (performance.now() - started) / 1000 };
}

/** One send per credit, as credits come in, until `end` and every credit was spent. */
function forwardCredits(): { credit(n: number): void; end(): Promise<Tally> } {
  let credits = 0;
  let inFlight = 0;
  let sent = 0;
  let ok = 0;
  let firstAtMs = 0;
  let lastAtMs = 0;
  let ending: (() => void) | undefined;
  const pump = (): void => {
    while (credits > 0 && inFlight < concurrency) {
      credits--;
      inFlight++;
      sent++;
      if (firstAtMs === 0) firstAtMs = performance.now();
      void sendOne().then((answered) => {
        if (answered) ok++;
        lastAtMs = performance.now();
        inFlight--;
        pump();
      });
    }
    if (ending && credits === 0 && inFlight === 0) ending();
  };
  return {
    credit(n) {
      credits += n;
      pump();
    },
    async end() {
      await new Promise<void>((done) => {
        ending = done;
        pump();
      });
      return { sent, ok, seconds: (lastAtMs - firstAtMs) / 1000 };
    },
  };
}

process.stdout.write('ready\n');
const credited = forwardCredits();
for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument] = line.trim().split(' ');
  if (command === 'go') {
    process.stdout.write(`${JSON.stringify(await forwardFor(Number(argument)))}\n`);
    break;
  }
  if (command === 'credit') credited.credit(Number(argument));
  if (command === 'end') {
    process.stdout.write(`${JSON.stringify(await credited.end())}\n`);
    break;
  }
}
await sender.close();
