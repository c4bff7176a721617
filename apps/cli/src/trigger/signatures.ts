/**
 * The four providers' signature schemes, computed over the exact body bytes that are
 * sent, as each provider documents them. Pure: the timestamp is passed in.
 */
import { createHmac } from 'node:crypto';

function hmac(algorithm: 'sha1' | 'sha256', secret: string, ...parts: Array<string | Buffer>): Buffer {
  const mac = createHmac(algorithm, secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** GitHub `X-Hub-Signature-256`: `sha256=` and the hex HMAC-SHA256 of the body. */
export function githubSignature256(secret: string, body: Buffer): string {
  return `sha256=${hmac('sha256', secret, body).toString('hex')}`;
}

/** GitHub's legacy `X-Hub-Signature` (still sent beside the SHA-256 one): `sha1=` and the hex HMAC-SHA1 of the body. */
export function githubSignature1(secret: string, body: Buffer): string {
  return `sha1=${hmac('sha1', secret, body).toString('hex')}`;
}

/** Stripe `Stripe-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function stripeSignature(secret: string, body: Buffer, timestampSeconds: number): string {
  return `t=${timestampSeconds},v1=${hmac('sha256', secret, `${timestampSeconds}.`, body).toString('hex')}`;
}

/** Shopify `X-Shopify-Hmac-Sha256`: the base64 HMAC-SHA256 of the body. */
export function shopifyHmac(secret: string, body: Buffer): string {
  return hmac('sha256', secret, body).toString('base64');
}

/** Slack `X-Slack-Signature`: `v0=` and the hex HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<body>`. */
export function slackSignature(secret: string, body: Buffer, timestampSeconds: number): string {
  return `v0=${hmac('sha256', secret, `v0:${timestampSeconds}:`, body).toString('hex')}`;
}
