/**
 * `hook alerts set|get|test|clear` against a real relay with a real SMTP server and a
 * local Slack receiver: channels are set (the Slack URL from stdin too), a test alert
 * reaches both, the URL never shows whole, and errors keep their exit codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-server.ts';

let relay: TestRelay;
let emailless: TestRelay;
let slack: Receiver;
let smtp: SmtpInbox;
const user = new HookUser();
const member = new HookUser();

beforeAll(async () => {
  smtp = await startSmtpInbox();
  slack = await startReceiver();
  relay = await startTestRelay({ retryScheduleMs: [20, 20, 20, 20], smtpUrl: smtp.url, alertEmailFrom: 'alerts@hook.example.test' });
  emailless = await startTestRelay({ role: 'api', smtpUrl: null, alertEmailFrom: null }, { sharing: relay });
  await user.json(['signup', '--api-url', relay.baseUrl]);
  const added = await user.json(['members', 'add', 'dev@example.com']);
  await member.json(['login', '--api-url', relay.baseUrl, '--api-key', added.api_key]);
});

afterAll(async () => {
  await emailless?.close();
  await relay?.close();
  await slack?.close();
  await smtp?.close();
  user.remove();
  member.remove();
});

describe('hook alerts', () => {
  it('get shows no channels at first', async () => {
    const settings = await user.json(['alerts', 'get']);
    expect(settings).toMatchObject({ slack: null, email: { to: [], available: true }, recent: [] });
    const text = await user.run(['alerts', 'get']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Slack:\s+\(none\)/);
    expect(text.stdout).toContain('No alerts sent yet');
  });

  it('set takes the Slack URL from stdin and addresses, and shows the URL cut short', async () => {
    const url = `${slack.url}/services/T0001/B0002/SeCrEtPaRt1234`;
    const set = await user.run(['alerts', 'set', '--slack', '-', '--email', 'ops@example.com, oncall@example.com'], { input: `${url}\n` });
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/Slack:\s+http:\/\/127\.0\.0\.1:\d+\/…1234/);
    expect(set.stdout).toMatch(/Email:\s+ops@example\.com, oncall@example\.com/);
    expect(set.stdout + set.stderr).not.toContain('SeCrEtPaRt');
    const json = await user.json(['alerts', 'get']);
    expect(json.slack.url_hint).toMatch(/…1234$/);
    expect(json.email.to).toEqual(['ops@example.com', 'oncall@example.com']);
  });

  it('test sends an alert to Slack and by email', async () => {
    const queued = await user.json(['alerts', 'test']);
    expect(queued).toEqual({ queued: ['email', 'slack'] });
    const [post] = await slack.waitFor(1, 15_000);
    expect(JSON.parse(post!.body.toString()).text).toMatch(/^Test alert from Hook: alerts of account acct_\w+ reach this channel$/);
    await expect.poll(() => smtp.messages.map((message) => message.to), { timeout: 15_000 }).toEqual([['ops@example.com', 'oncall@example.com']]);
    await expect.poll(async () => (await user.json(['alerts', 'get'])).recent.map((alert: any) => alert.status), { timeout: 15_000 }).toEqual(['sent', 'sent']);
    const text = await user.run(['alerts', 'get']);
    expect(text.stdout).toMatch(/slack\s+test\s+sent/);
  });

  it('refuses a member, bad input and email on a relay without SMTP, with exit codes', async () => {
    const refused = await member.run(['alerts', 'set', '--slack', 'https://hooks.slack.com/services/T/B/x', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr).code).toBe('admin_required');

    const nothing = await user.run(['alerts', 'set']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('Nothing to set');

    const emptyStdin = await user.run(['alerts', 'set', '--slack', '-'], { input: '' });
    expect(emptyStdin.code).toBe(2);

    const noSmtp = await user.run(['alerts', 'set', '--email', 'ops@example.com', '--api-url', emailless.baseUrl]);
    expect(noSmtp.code).toBe(1);
    expect(noSmtp.stderr).toContain('sends no email');
    expect(noSmtp.stderr).toContain('hook alerts set --slack');
    expect(noSmtp.stderr).not.toMatch(/PUT \/v1/);
  });

  it('clear removes one channel, or both', async () => {
    const emailGone = await user.json(['alerts', 'clear', '--email']);
    expect(emailGone.email.to).toEqual([]);
    expect(emailGone.slack).not.toBeNull();
    const both = await user.json(['alerts', 'clear']);
    expect(both).toMatchObject({ slack: null, email: { to: [] } });
    const test = await user.run(['alerts', 'test']);
    expect(test.code).toBe(0);
    expect(test.stdout).toContain('No alert channel is set');
  });
});
