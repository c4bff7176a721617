/**
 * GitHub (docs: "Validating webhook deliveries", "Webhook events and payloads"):
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(body)>` under the webhook's secret, and the
 * legacy `X-Hub-Signature: sha1=<hex HMAC-SHA1(body)>` beside it. No timestamp is signed.
 * The event is `X-GitHub-Event` with the body's `action` (`pull_request.opened`, as
 * Octokit names it); `X-GitHub-Delivery` is a GUID that a redelivery keeps.
 */
import { createHmac } from 'node:crypto';
import { bodyHmacSha256, defineProvider, HEX_DIGITS, objectAt, unixSeconds, type ProviderSigner } from './provider.ts';

const SIGNATURE = 'x-hub-signature-256';

/** ISO 8601 without milliseconds, as GitHub writes its times. */
function isoSeconds(nowMs: number): string {
  return new Date(unixSeconds(nowMs) * 1000).toISOString().replace('.000Z', 'Z');
}

const signer = {
  description: 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body> (and the legacy X-Hub-Signature: sha1=…)',
  headers: [SIGNATURE],
  signsTimestamp: false,
  sign: (secret, body) => ({
    'x-hub-signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
    [SIGNATURE]: `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  }),
} satisfies ProviderSigner;

export const github = defineProvider({
  name: 'github',
  title: 'GitHub',
  verification: bodyHmacSha256(SIGNATURE, 'hex', 'sha256='),
  signer,
  typeHeader: { header: 'x-github-event', withAction: true },
  dedupe: { header: 'x-github-delivery' },
  samples: {
    defaultSecret: 'hook-test-github-secret',
    deliveryIdHeader: 'X-GitHub-Delivery',
    events: [
      { name: 'push', description: 'Commits pushed to a branch (refs/heads/main)' },
      { name: 'pull_request', description: 'A pull request opened (action "opened")' },
      { name: 'ping', description: 'Sent when a webhook is created' },
    ],
    request(event, payload, secret, context) {
      const now = isoSeconds(context.nowMs);
      if (event === 'push') {
        const repository = objectAt(payload, 'repository');
        if (repository) repository.pushed_at = unixSeconds(context.nowMs);
        const head = objectAt(payload, 'head_commit');
        if (head) head.timestamp = now;
        const commits = payload.commits;
        if (Array.isArray(commits)) for (const commit of commits) if (commit && typeof commit === 'object' && !Array.isArray(commit)) commit.timestamp = now;
      }
      if (event === 'pull_request') {
        const pull = objectAt(payload, 'pull_request');
        if (pull) Object.assign(pull, { created_at: now, updated_at: now });
      }
      const hook = objectAt(payload, 'hook');
      if (hook) Object.assign(hook, { created_at: now, updated_at: now });
      const hookConfig = objectAt(payload, 'hook', 'config');
      if (hookConfig) hookConfig.url = context.endpointUrl;
      // GitHub sends compact JSON.
      const body = Buffer.from(JSON.stringify(payload));
      const hookId = typeof payload.hook_id === 'number' ? payload.hook_id : 512093374;
      const repositoryId = objectAt(payload, 'repository')?.id;
      return {
        body,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': `GitHub-Hookshot/${context.token(7, HEX_DIGITS)}`,
          'X-GitHub-Delivery': context.uuid(),
          'X-GitHub-Event': event,
          'X-GitHub-Hook-ID': String(hookId),
          'X-GitHub-Hook-Installation-Target-ID': String(repositoryId ?? ''),
          'X-GitHub-Hook-Installation-Target-Type': 'repository',
          ...signer.sign(secret, body),
        },
      };
    },
  },
});
