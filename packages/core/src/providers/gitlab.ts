/**
 * GitLab (docs: "Webhooks", "Validate payloads by using a secret token", "Delivery
 * headers"): no signature, a shared secret token sent as it is in `X-Gitlab-Token`. It is
 * compared in constant time, as SHA-256 digests of equal length, so the time taken says
 * nothing about the token's length or how much of it matched. No timestamp is sent, so
 * there is no tolerance. The event is `X-Gitlab-Event` (`Push Hook`, `Merge Request Hook`);
 * `Idempotency-Key` (GitLab 17.4 on) stays the same on GitLab's retries of one delivery,
 * where `X-Gitlab-Event-UUID` is shared by webhooks one event causes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { defineProvider, objectAt, unixSeconds, type ProviderSigner } from './provider.ts';

const TOKEN = 'x-gitlab-token';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

const signer = {
  description: 'X-Gitlab-Token: <the secret token itself>',
  headers: [TOKEN],
  signsTimestamp: false,
  sign: (secret) => ({ [TOKEN]: secret }),
} satisfies ProviderSigner;

/** The sample webhook's own id: the same on every delivery of one webhook. */
const WEBHOOK_UUID = '5f0a3d7e-1c2b-4e8f-9a6d-2b7c4e1f8a90';

/** What GitLab sends in X-Gitlab-Event for each sample (its `object_kind`). */
const EVENT_HEADER: Readonly<Record<string, string>> = { push: 'Push Hook', merge_request: 'Merge Request Hook' };

export const gitlab = defineProvider({
  name: 'gitlab',
  title: 'GitLab',
  verification: {
    create(_settings, secret, { ok, fail }) {
      const expected = digest(secret);
      return (headers) => {
        const value = headers[TOKEN];
        if (value === undefined) return fail('missing_header', TOKEN);
        return timingSafeEqual(digest(value.trim()), expected) ? ok : fail('no_signature_matches', TOKEN);
      };
    },
  },
  signer,
  typeHeader: { header: 'x-gitlab-event', withAction: false },
  dedupe: { header: 'idempotency-key' },
  samples: {
    defaultSecret: 'hook-test-gitlab-token',
    deliveryIdHeader: 'Idempotency-Key',
    events: [
      { name: 'push', description: 'Commits pushed to a branch (refs/heads/main)' },
      { name: 'merge_request', description: 'A merge request opened (object_attributes.action "open")' },
    ],
    request(event, payload, secret, context) {
      // GitLab writes times with an offset, without milliseconds.
      const now = new Date(unixSeconds(context.nowMs) * 1000).toISOString().replace('.000Z', '+00:00');
      if (event === 'push') {
        const commits = payload.commits;
        if (Array.isArray(commits)) for (const commit of commits) if (commit && typeof commit === 'object' && !Array.isArray(commit)) commit.timestamp = now;
      }
      if (event === 'merge_request') {
        const attributes = objectAt(payload, 'object_attributes');
        if (attributes) Object.assign(attributes, { created_at: now, updated_at: now });
      }
      const body = Buffer.from(JSON.stringify(payload));
      return {
        body,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': `GitLab/18.${context.token(1, '0123456789')}.0`,
          'X-Gitlab-Event': EVENT_HEADER[event] ?? event,
          'X-Gitlab-Webhook-UUID': WEBHOOK_UUID,
          'X-Gitlab-Event-UUID': context.uuid(),
          'X-Gitlab-Instance': 'https://gitlab.com',
          'Idempotency-Key': context.uuid(),
          'X-Gitlab-Token': signer.sign(secret)[TOKEN],
        },
      };
    },
  },
});
