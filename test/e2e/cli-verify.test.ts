/**
 * `hook endpoints update --verify …` and `hook endpoints create --verify …` (docs/sources.md):
 * the real `hook` binary against a real relay; a request GitHub's own SDK signs is then
 * stored verified, shown by `hook events get`; a forged one is refused.
 */
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { signedUpUser } from '../support/cli.ts';

const signedUp = signedUpUser();
const { user } = signedUp;

const payload = '{"zen":"Responsive is better than fast.","hook_id":12345678}';

describe('hook endpoints update --verify', () => {
  it('sets GitHub verification from a secret file; a signed request is verified, a forged one refused; --no-verify clears it', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'github']);
    const secretFile = join(user.home, 'github-secret.txt');
    writeFileSync(secretFile, "It's a Secret to Everybody\n");

    const updated = await user.json(['endpoints', 'update', 'github', '--verify', 'github', '--verify-secret-file', secretFile]);
    expect(updated.verification).toEqual({ provider: 'github', mode: 'reject', tolerance_seconds: 300, secret_set: true, secret_hint: 'body' });
    expect(JSON.stringify(updated)).not.toContain("It's a Secret");

    const signed = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': await sign("It's a Secret to Everybody", payload) }, body: payload });
    expect(signed.status).toBe(200);
    const { id } = await signed.json() as { id: string };
    expect((await user.json(['events', 'get', id])).verification).toEqual({ provider: 'github', verified: true, reason: null });
    expect((await user.run(['events', 'get', id])).stdout).toMatch(/Signature:\s+github verified/);

    const forged = await fetch(endpoint.url, { method: 'POST', headers: { 'x-hub-signature-256': await sign('guessed', payload) }, body: payload });
    expect(forged.status).toBe(401);
    expect((await forged.json() as { code: string }).code).toBe('signature_invalid');

    const shown = await user.run(['endpoints', 'get', 'github']);
    expect(shown.stdout).toMatch(/Verification:\s+github, reject, secret …body/);

    const cleared = await user.json(['endpoints', 'update', 'github', '--no-verify']);
    expect(cleared.verification).toBeNull();
    expect((await fetch(endpoint.url, { method: 'POST', body: payload })).status).toBe(200);
  });

  it('flag mode from create: stored and marked; hmac flags need --verify hmac; a missing secret file is a usage error (exit 2)', async () => {
    const secretFile = join(user.home, 'slack-secret.txt');
    writeFileSync(secretFile, '8f742231b10e8888abcd99yyyzzz85a5');
    const created = await user.json(['endpoints', 'create', 'slack', '--verify', 'slack', '--verify-secret-file', secretFile, '--verify-mode', 'flag', '--verify-tolerance', '60']);
    expect(created.verification).toMatchObject({ provider: 'slack', mode: 'flag', tolerance_seconds: 60 });
    const unsigned = await fetch(created.url, { method: 'POST', body: 'token=x' });
    expect(unsigned.status).toBe(200);
    const { id } = await unsigned.json() as { id: string };
    expect((await user.run(['events', 'get', id])).stdout).toMatch(/Signature:\s+slack unverified: missing header/);

    const noSecret = await user.run(['endpoints', 'update', 'slack', '--verify', 'github']);
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('--verify-secret-file');
    expect(noSecret.stdout).toBe('');
    const misplaced = await user.run(['endpoints', 'update', 'slack', '--verify', 'github', '--verify-secret-file', secretFile, '--verify-header', 'x-sig']);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--verify-header only go with --verify hmac');
    const absent = await user.run(['endpoints', 'update', 'slack', '--verify', 'github', '--verify-secret-file', join(user.home, 'absent.txt')]);
    expect(absent.code).toBe(2);
    expect(absent.stderr).toContain('Cannot read --verify-secret-file');
    const hmac = await user.json(['endpoints', 'update', 'slack', '--verify', 'hmac', '--verify-secret-file', secretFile, '--verify-header', 'X-Signature', '--verify-algorithm', 'sha1', '--verify-prefix', 'sha1=']);
    expect(hmac.verification).toMatchObject({ provider: 'hmac', header: 'x-signature', algorithm: 'sha1', encoding: 'hex', prefix: 'sha1=', signed: 'body' });
  });

  it('tells hook trigger to sign with --secret when the endpoint verifies, and a stale timestamp apart from a wrong secret', async () => {
    const secretFile = join(user.home, 'stripe-secret.txt');
    const secret = 'whsec_endpoint_own_secret';
    writeFileSync(secretFile, secret);
    await user.json(['endpoints', 'create', 'stripe', '--verify', 'stripe', '--verify-secret-file', secretFile]);

    const sample = await user.run(['trigger', 'stripe', 'payment_intent.succeeded', '--endpoint', 'stripe', '--json']);
    expect(sample.code).toBe(1);
    const refused = JSON.parse(sample.stderr.trim().split('\n').at(-1)!);
    expect(refused.code).toBe('signature_invalid');
    expect(refused.fix).toContain('`hook trigger stripe payment_intent.succeeded --endpoint stripe --secret <secret>`');
    expect((await user.json(['trigger', 'stripe', 'payment_intent.succeeded', '--endpoint', 'stripe', '--secret', secret])).status).toBe('pending');

    // Signed with the right secret ten minutes ago: only the timestamp is wrong, and the fix says so.
    const body = '{"id":"evt_1","type":"invoice.paid"}';
    const t = Math.floor(Date.now() / 1000) - 600;
    const signature = `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
    const stale = await user.run(['send', 'stripe', '--data', body, '-H', `stripe-signature: ${signature}`]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('timestamp outside tolerance');
    expect(stale.stderr).toContain('signed with the endpoint\'s secret, but its signed timestamp');
    expect(stale.stderr).not.toContain('was not signed with its secret');
    const wrong = await user.run(['send', 'stripe', '--data', body, '-H', `stripe-signature: t=${t + 600},v1=${createHmac('sha256', 'other').update(`${t + 600}.${body}`).digest('hex')}`]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('was not signed with its secret');
  });
});
