import { createHmac, timingSafeEqual } from 'node:crypto';

/** The key bytes inside a `whsec_<base64>` secret. */
function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/**
 * The Standard Webhooks signature of one delivery: `v1,` + base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` over the body's exact bytes (never a re-serialised copy).
 */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: Buffer): string {
  const mac = createHmac('sha256', secretKey(secret));
  mac.update(`${id}.${timestampSeconds}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

/** Signatures for several secrets at once, space-separated, as sent during a secret rotation. */
export function signPayloadWithSecrets(secrets: readonly string[], id: string, timestampSeconds: number, body: Buffer): string {
  return secrets.map((secret) => signPayload(secret, id, timestampSeconds, body)).join(' ');
}

/** Whether any `v1,` signature in a `webhook-signature` header value matches this secret. */
export function signatureMatches(secret: string, id: string, timestampSeconds: number, body: Buffer, header: string): boolean {
  const expected = Buffer.from(signPayload(secret, id, timestampSeconds, body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
