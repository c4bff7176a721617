/**
 * `hook endpoints create/update --handshake …` (docs/sources.md, Handshakes): the real
 * `hook` binary against a real relay; the ingest URL then answers Meta's subscribe check
 * with the token from the file; the secret is never shown; --no-handshake turns it off.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signedUpUser } from '../support/cli.ts';

const signedUp = signedUpUser();
const { user } = signedUp;

describe('hook endpoints --handshake', () => {
  it('sets Meta\'s handshake from a token file; the challenge is answered; hook endpoints get shows it; --no-handshake clears it', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'whatsapp']);
    const tokenFile = join(user.home, 'verify-token.txt');
    writeFileSync(tokenFile, 'meatyhamhock\n');
    const updated = await user.json(['endpoints', 'update', 'whatsapp', '--handshake', 'meta', '--handshake-secret-file', tokenFile]);
    expect(updated.handshake).toEqual({ provider: 'meta', secret_set: true, secret_hint: 'hock' });
    expect(JSON.stringify(updated)).not.toContain('meatyhamhock');
    expect((await user.run(['endpoints', 'get', 'whatsapp'])).stdout).toMatch(/Handshake:\s+meta, secret …hock/);

    const answer = await fetch(`${endpoint.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock`);
    expect(await answer.text()).toBe('1158201444');
    const [event] = (await user.json(['events', 'list', '--endpoint', 'whatsapp'])).data;
    expect(event).toMatchObject({ handshake: 'meta', status: 'filtered' });

    const cleared = await user.json(['endpoints', 'update', 'whatsapp', '--no-handshake']);
    expect(cleared.handshake).toBeNull();
  });

  it('hook trigger slack url_verification and hook send to an endpoint with --handshake slack succeed: answered, stored as slack.handshake, not delivered', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'slack-events', '--handshake', 'slack']);
    const triggered = await user.run(['trigger', 'slack', 'url_verification', '--endpoint', 'slack-events']);
    expect(triggered.code, triggered.stderr).toBe(0);
    const line = new RegExp(`^Sent slack url_verification to slack-events \\(${endpoint.id}\\): (evt_\\w+) handshake, \\d+ bytes: the relay answered the handshake and stored it as slack\\.handshake; it is not delivered\\.$`, 'm');
    expect(triggered.stdout).toMatch(line);
    const [, first] = line.exec(triggered.stdout)!;
    expect(triggered.stderr).not.toContain('Verify it in your handler');

    const json = await user.json(['trigger', 'slack', 'url_verification', '--endpoint', 'slack-events']);
    expect(json).toMatchObject({ event_id: expect.stringMatching(/^evt_/), status: 'handshake', type: 'slack.handshake', provider: 'slack', event: 'url_verification', endpoint_id: endpoint.id });
    const sent = await user.json(['send', 'slack-events', '--data', '{"type":"url_verification","challenge":"c1"}']);
    expect(sent).toEqual({ id: expect.stringMatching(/^evt_/), status: 'handshake', endpoint_id: endpoint.id, type: 'slack.handshake' });

    const events = (await user.json(['events', 'list', '--endpoint', 'slack-events'])).data;
    expect(events.map((event: { id: string }) => event.id).sort()).toEqual([first, json.event_id, sent.id].sort());
    for (const event of events) expect(event).toMatchObject({ handshake: 'slack', type: 'slack.handshake', status: 'filtered' });
  });

  it('a provider that needs a secret without the file, or a file for one that needs none, is a usage error (exit 2)', async () => {
    await user.json(['endpoints', 'create', 'zoom']);
    const missing = await user.run(['endpoints', 'update', 'zoom', '--handshake', 'zoom']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--handshake-secret-file');
    expect(missing.stdout).toBe('');
    const file = join(user.home, 'x.txt');
    writeFileSync(file, 'x');
    const extra = await user.run(['endpoints', 'update', 'zoom', '--handshake', 'slack', '--handshake-secret-file', file]);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('takes no --handshake-secret-file');
    const slack = await user.json(['endpoints', 'update', 'zoom', '--handshake', 'slack']);
    expect(slack.handshake).toEqual({ provider: 'slack', secret_set: false, secret_hint: null });
  });
});
