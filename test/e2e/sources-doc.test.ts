/**
 * docs/sources.md runs as written: each provider section's `sh` block, verbatim, with bash,
 * as a user whose `hook` talks to a real relay. Every request the page signs must be
 * stored and marked verified; the unsigned one it shows must get its 401. Custom responses
 * and Duplicates check the answers they show, handshakes the answer under each curl.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const PAGE = readFileSync(join(REPO_ROOT, 'docs', 'sources.md'), 'utf8');
const SECTIONS = PAGE.split('\n## ').slice(1).map((section) => ({
  title: section.slice(0, section.indexOf('\n')),
  script: /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? null,
}));

let relay: TestRelay;
const user = new HookUser();

function runScript(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: user.home,
      env: { PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, HOME: user.home, XDG_CONFIG_HOME: user.configHome },
      timeout: 60_000,
    }, (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
  });
}

beforeAll(async () => {
  relay = await startTestRelay();
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['account', 'plan', 'pro']);
  // The sections after GitHub's update an endpoint the reader already has.
  for (const name of ['stripe', 'shopify', 'slack', 'orders', 'partner']) await user.json(['endpoints', 'create', name]);
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

describe('docs/sources.md', () => {
  it('has a section per provider', () => {
    expect(SECTIONS.map((section) => section.title)).toEqual(['GitHub', 'Stripe', 'Shopify', 'Slack', 'Standard Webhooks', 'GitLab', 'Any other HMAC (`hmac`)', 'Custom responses', 'Duplicates',
      'Handshake: overview', 'Handshake: Slack', 'Handshake: Meta (WhatsApp, Messenger, Instagram)', 'Handshake: Microsoft Graph', 'Handshake: Dropbox', 'Handshake: Zoom', 'Handshake: X (Twitter) CRC',
      'Adding a provider']);
  });

  for (const { title, script } of SECTIONS.filter((section) => section.title.startsWith('Handshake: ') && section.script !== null)) {
    it(`${title}: the example runs and each answer is the one shown under its curl`, async () => {
      const run = await runScript(script!);
      expect(run.code, run.stderr).toBe(0);
      const lines = script!.split('\n');
      const shown = lines.flatMap((line, i) => (line.startsWith('curl ') ? [lines[i + 1]!.replace(/^# /, '')] : []));
      // The curls come last: their answers are the last lines (hook endpoints create prints the endpoint first).
      expect(run.stdout.trimEnd().split('\n').slice(-shown.length)).toEqual(shown);
      // Stored as a handshake, not delivered.
      const endpointName = /hook endpoints create (\S+)/.exec(script!)![1]!;
      const events = await user.json(['events', 'list', '--endpoint', endpointName]);
      expect(events.data.length).toBeGreaterThan(0);
      for (const event of events.data) expect(event).toMatchObject({ handshake: expect.any(String), status: 'filtered' });
    });
  }

  // Every section but the handshakes' and "Adding a provider" (which has no example to run).
  for (const { title, script } of SECTIONS.filter((section) => !section.title.startsWith('Handshake: ') && section.title !== 'Adding a provider') as Array<{ title: string; script: string }>) {
    it(`${title}: the example runs, and each request it signs is stored verified`, async () => {
      const run = await runScript(script);
      expect(run.code, run.stderr).toBe(0);
      const answers = run.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
      const curls = (script.match(/^curl /gm) ?? []).length;
      expect(answers).toHaveLength(curls);
      if (title === 'Duplicates') {
        // The first copy is stored; the second is answered with its id, and the endpoint has that one event.
        expect(answers).toEqual([{ id: expect.stringMatching(/^evt_/), status: 'pending' }, { id: answers[0].id, status: 'duplicate' }]);
        const endpointName = /hook endpoints create (\S+)/.exec(script)![1]!;
        const events = await user.json(['events', 'list', '--endpoint', endpointName]);
        expect(events.data).toEqual([expect.objectContaining({ id: answers[0].id, dedupe_key: '72d3162e-cc78-11e3-81ab-4c9367dc0958' })]);
        expect(run.stdout).toContain(answers[0].id); // hook events list, as the page runs it, shows it
        return;
      }
      for (const answer of answers) {
        if (title === 'Custom responses') {
          // The endpoint's own answer, the stored event's id filled in.
          expect(answer).toEqual({ ok: true, received: expect.stringMatching(/^evt_/) });
          expect((await user.json(['events', 'get', answer.received])).body).toBe('{"order":42}');
        } else if (answer.id) {
          const event = await user.json(['events', 'get', answer.id]);
          expect(event.verification).toMatchObject({ verified: true, reason: null });
          if (title === 'GitLab') expect(event.type).toBe('Push Hook');
        } else if (title === 'GitLab') {
          // The guessed token.
          expect(answer).toMatchObject({ status: 401, code: 'signature_invalid', errors: [{ field: 'headers.x-gitlab-token', message: 'no_signature_matches' }] });
        } else {
          expect(answer).toMatchObject({ status: 401, code: 'signature_invalid', errors: [{ field: 'headers.x-hub-signature-256', message: 'missing_header' }] });
        }
      }
      if (curls > 0 && title !== 'Custom responses') expect(answers.some((answer) => answer.id)).toBe(true);
    });
  }
});
