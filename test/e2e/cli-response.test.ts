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

  it('hook send to an endpoint with a custom response (JSON, text, XML) reports the stored event, exit 0; a duplicate says so; each event is stored once', async () => {
    const files = { json: '{"ok":true}', text: 'thanks', xml: '<?xml version="1.0"?><Response/>' };
    for (const [kind, body] of Object.entries(files)) writeFileSync(join(user.home, `answer.${kind}`), body);
    const endpoint = await user.json(['endpoints', 'create', 'answered', '--dedupe-field', 'id']);
    const stored: string[] = [];
    for (const [kind, flags] of [
      ['json', ['--response-header', 'Content-Type: application/json', '--response-body-file', join(user.home, 'answer.json')]],
      ['text', ['--response-body-file', join(user.home, 'answer.text')]],
      ['xml', ['--response-status', '202', '--response-header', 'Content-Type: application/xml', '--response-body-file', join(user.home, 'answer.xml')]],
    ] as const) {
      await user.json(['endpoints', 'update', 'answered', ...flags]);
      const sent = await user.run(['send', 'answered', '--data', `{"id":"${kind}1"}`]);
      expect(sent.code, `${kind}: ${sent.stderr}`).toBe(0);
      const line = new RegExp(`^Sent (evt_\\w+) to answered \\(${endpoint.id}\\): pending, \\d+ bytes\\.$`, 'm');
      expect(sent.stdout, kind).toMatch(line);
      const [, first] = line.exec(sent.stdout)!;
      const json = await user.json(['send', 'answered', '--data', `{"id":"${kind}2"}`]);
      expect(json, kind).toEqual({ id: expect.stringMatching(/^evt_/), status: 'pending', endpoint_id: endpoint.id });

      const repeated = await user.run(['send', 'answered', '--data', `{"id":"${kind}1"}`]);
      expect(repeated.code, `${kind}: ${repeated.stderr}`).toBe(0);
      expect(repeated.stdout, kind).toMatch(`Sent ${first} to answered (${endpoint.id}): duplicate, `);
      expect(repeated.stdout, kind).toContain(`: its dedupe key was already stored, as ${first}; nothing was stored or delivered again.`);
      expect(await user.json(['send', 'answered', '--data', `{"id":"${kind}2"}`]), kind).toEqual({ id: json.id, status: 'duplicate', endpoint_id: endpoint.id });
      stored.push(first!, json.id);
    }
    const listed = (await user.json(['events', 'list', '--endpoint', 'answered'])).data.map((event: { id: string }) => event.id);
    expect(listed.sort()).toEqual(stored.sort());
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
