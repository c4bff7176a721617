/**
 * `hook endpoints create/update --response-…` (docs/sources.md, Custom responses): the real
 * `hook` binary against a real relay; the ingest URL then answers with that status,
 * headers and body, the event id filled in; --clear-response restores the default.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signedUpUser } from '../support/cli.ts';

const signedUp = signedUpUser();
const { user } = signedUp;

describe('hook endpoints --response-…', () => {
  it('sets a custom response from flags; the ingest URL answers with it; --clear-response restores the default', async () => {
    const bodyFile = join(user.home, 'answer.json');
    writeFileSync(bodyFile, '{"received":"{{event_id}}"}');
    const created = await user.json(['endpoints', 'create', 'orders', '--response-status', '202', '--response-header', 'Content-Type: application/json', '--response-header', 'X-Ack: yes', '--response-body-file', bodyFile]);
    expect(created.response).toEqual({ status: 202, headers: { 'content-type': 'application/json', 'x-ack': 'yes' }, body: '{"received":"{{event_id}}"}' });
    expect((await user.run(['endpoints', 'get', 'orders'])).stdout).toMatch(/Response:\s+202, content-type, x-ack, 27 bytes of body/);

    const answer = await fetch(created.url, { method: 'POST', body: '{"n":1}' });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('x-ack')).toBe('yes');
    const { received } = await answer.json() as { received: string };
    expect((await user.json(['events', 'get', received])).id).toBe(received);

    const plain = await user.json(['endpoints', 'update', 'orders', '--response-status', '200']);
    expect(plain.response).toEqual({ status: 200, headers: {}, body: '' });

    const cleared = await user.json(['endpoints', 'update', 'orders', '--clear-response']);
    expect(cleared.response).toBeNull();
    expect(await (await fetch(created.url, { method: 'POST', body: 'x' })).json()).toEqual({ id: expect.stringMatching(/^evt_/), status: 'pending' });
  });

  it('a status outside 200–299 is a usage error (exit 2); the relay\'s refusal of a Set-Cookie header is exit 1 naming the field', async () => {
    await user.json(['endpoints', 'create', 'bounded']);
    const status = await user.run(['endpoints', 'update', 'bounded', '--response-status', '302']);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('200 to 299');
    expect(status.stdout).toBe('');

    const cookie = await user.run(['endpoints', 'update', 'bounded', '--response-header', 'Set-Cookie: a=b']);
    expect(cookie.code).toBe(1);
    expect(cookie.stderr).toContain('body.response.headers.Set-Cookie');
    expect(cookie.stdout).toBe('');

    // A type a browser would run, and a header it would act on: refused, the message names what is allowed.
    const html = await user.run(['endpoints', 'update', 'bounded', '--response-header', 'Content-Type: text/html', '--response-header', 'Refresh: 0; url=https://evil.example']);
    expect(html.code).toBe(1);
    expect(html.stderr).toContain('body.response.headers.Content-Type must be one of text/plain, application/json, application/xml, text/xml');
    expect(html.stderr).toContain('body.response.headers.Refresh may not be set');

    const both = await user.run(['endpoints', 'update', 'bounded', '--clear-response', '--response-status', '200']);
    expect(both.code).toBe(2);
  });
});
