/**
 * The forwarder of bench:delivery's ceiling phase: the relay's own send path with no
 * database at all. It signs each body as a delivery is signed (deliveryHeaders) and
 * POSTs it over the relay's DeliverySender (pooled keep-alive undici connections, the
 * answer read), FORWARD_CONCURRENCY at a time, to FORWARD_URL. What it reaches is the
 * most a relay could deliver on this machine if the queue cost nothing.
 *
 * Run as its own process, like the relay. Prints `ready` as its first stdout line; on a
 * stdin line `go <seconds>` it sends for that long, then prints one JSON line
 * `{"sent":…,"ok":…,"seconds":…}` and exits.
 *
 * Environment: FORWARD_URL (required), FORWARD_CONCURRENCY (default 64, the relay's
 * default HOOK_DELIVERY_CONCURRENCY), FORWARD_BODY_BYTES (default 1024).
 */
import { createInterface } from 'node:readline';
import { newId, generateSigningSecret } from '@hook/core';
import { deliveryHeaders } from '../../apps/relay/src/delivery/attempt.ts';
import { DeliverySender } from '../../apps/relay/src/delivery/sender.ts';
import { jsonBody } from './support.ts';

const url = process.env.FORWARD_URL;
if (!url) throw new Error('FORWARD_URL is required');
const concurrency = Number(process.env.FORWARD_CONCURRENCY ?? 64);
const body = jsonBody(Number(process.env.FORWARD_BODY_BYTES ?? 1024));
const secrets = [generateSigningSecret()];
const sender = new DeliverySender({ timeoutMs: 15_000, allowPrivateDestinations: true });

async function forward(seconds: number): Promise<{ sent: number; ok: number; seconds: number }> {
  const started = performance.now();
  const endAt = started + seconds * 1000;
  let sent = 0;
  let ok = 0;
  const lane = async (): Promise<void> => {
    while (performance.now() < endAt) {
      const id = newId('event');
      const result = await sender.send(url!, deliveryHeaders({ id, headers: { 'content-type': 'application/json' }, body, secrets, attemptCount: 0 }, Math.floor(Date.now() / 1000)), body);
      sent++;
      if (result.status !== null && result.status >= 200 && result.status < 300) ok++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { sent, ok, seconds: (performance.now() - started) / 1000 };
}

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const match = /^go (\d+(?:\.\d+)?)$/.exec(line.trim());
  if (!match) continue;
  process.stdout.write(`${JSON.stringify(await forward(Number(match[1])))}\n`);
  break;
}
await sender.close();
