import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_CHANNEL_LIMIT_PER_HOUR, ALERT_TESTS_PER_HOUR, issueTitle, type IssueKind } from '@hook/core';
import { enqueueNotification } from '@hook/db';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, createEndpoint, expectProblem, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';
import { startSmtpInbox, type SmtpInbox } from '@hook/test/smtp-server';
import { SlackPoster } from '../src/alerts/slack.ts';
import { loadConfig } from '../src/config.ts';

const FAST_SCHEDULE = [30, 30, 30, 30, 30, 30];
const PUBLIC_URL = 'https://hook.example.test';

let relay: TestRelay;
/** A relay on the same database that serves the API only (no alert sender), refuses private destinations and has no SMTP. */
let strict: TestRelay;
let smtp: SmtpInbox;
const receivers: Receiver[] = [];

beforeAll(async () => {
  smtp = await startSmtpInbox();
  relay = await startTestRelay(
    { retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 1000, publicUrl: PUBLIC_URL, smtpUrl: smtp.url, alertEmailFrom: 'Hook alerts <alerts@hook.example.test>' },
    { workerPollMs: 20 },
  );
  strict = await startTestRelay({ role: 'api', allowPrivateDestinations: false, smtpUrl: null, alertEmailFrom: null }, { sharing: relay });
});
afterAll(async () => {
  await strict?.close();
  await relay?.close();
  await smtp?.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(respond?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(respond);
  receivers.push(started);
  return started;
}

interface SlackPost {
  text: string;
  blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[];
}

/** Every Slack message the receiver got, parsed, with all its words in one string. */
function slackPosts(inbox: Receiver): (SlackPost & { words: string })[] {
  return inbox.requests.map((request) => {
    const post = JSON.parse(request.body.toString()) as SlackPost;
    const words = [post.text, ...post.blocks.flatMap((block) => [block.text?.text ?? '', ...(block.elements ?? []).map((element) => element.text)])].join('\n');
    return { ...post, words };
  });
}

function mailsTo(address: string) {
  return smtp.messages.filter((message) => message.to.includes(address));
}

/** An endpoint's ingest URL on the test relay (endpoint URLs are built on PUBLIC_URL, which links in alerts use). */
function ingestUrl(endpoint: { url: string }): string {
  return endpoint.url.replace(PUBLIC_URL, relay.baseUrl);
}

/** The account's issues in a status, read from the database (the alert path does not need the issues API). */
async function issuesOf(accountId: string, status: string): Promise<{ id: string; kind: IssueKind; last_status: number | null; failure_count: number; reopen_count: number }[]> {
  return sqlRows(relay, 'select id, kind, last_status, failure_count::int as failure_count, reopen_count from issue where account_id = ? and status = ? order by id', [accountId, status]);
}

/** A new account whose alerts go to a new Slack receiver (and to `email`, when given). */
async function alertedAccount(options: { email?: string; slackRespond?: Parameters<typeof startReceiver>[0] } = {}) {
  const { key, accountId } = await signUp(relay.baseUrl);
  const slack = await receiver(options.slackRespond);
  const set = await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: `${slack.url}/services/T000/B000/secretpart`, ...(options.email ? { email_to: [options.email] } : {}) } });
  expect(set.status).toBe(200);
  return { key, accountId, slack };
}

describe('alert channels', () => {
  it('shows the Slack URL as a hint only, the addresses, the types and whether email is available', async () => {
    const { key } = await signUp(relay.baseUrl);
    const empty = await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ slack: null, email: { to: [], available: true }, types: ['issue.opened', 'issue.reopened', 'destination.disabled', 'endpoint.disabled'], recent: [] });

    const url = 'https://hooks.slack.example.test/services/T0001/B0002/AbCdEfGhIjKlMnOp';
    const set = await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: url, email_to: ['ops@example.com', 'OPS@example.com', 'dev@example.com'] } });
    expect(set.status).toBe(200);
    expect(set.body.slack).toEqual({ url_hint: 'https://hooks.slack.example.test/…MnOp' });
    expect(JSON.stringify(set.body)).not.toContain('AbCdEfGh');
    expect(set.body.email).toEqual({ to: ['ops@example.com', 'dev@example.com'], available: true });
    // Stored sealed, like signing secrets.
    const [stored] = await sqlRows(relay, "select slack_url from alert_channel where channel = 'slack' and slack_url_hint = ?", ['https://hooks.slack.example.test/…MnOp']);
    expect(stored.slack_url).toMatch(/^enc:/);

    // A field left out stays; null and [] remove the channel.
    expect((await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { email_to: [] } })).body).toMatchObject({ slack: { url_hint: expect.any(String) }, email: { to: [] } });
    expect((await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: null } })).body).toMatchObject({ slack: null, email: { to: [] } });
  });

  it('refuses a Slack URL that is not https, bad addresses, and a member\'s changes', async () => {
    const { key } = await signUp(strict.baseUrl);
    const http = expectProblem(await api(strict.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: 'http://hooks.slack.com/services/T/B/x' } }), 400, 'validation_failed');
    expect(http.errors).toEqual([{ field: 'body.slack_webhook_url', message: expect.stringContaining('https://') }]);
    expectProblem(await api(strict.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: 'not a url' } }), 400, 'validation_failed');
    const address = expectProblem(await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { email_to: ['not-an-address'] } }), 400, 'validation_failed');
    expect(address.errors[0].field).toMatch(/email_to/);

    const member = await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: 'dev@example.com' } });
    const memberKey = member.body.api_key as string;
    expect((await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key: memberKey })).status).toBe(200);
    expectProblem(await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key: memberKey, json: { slack_webhook_url: 'https://hooks.slack.com/services/T/B/x' } }), 403, 'admin_required');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key: memberKey }), 403, 'admin_required');
  });

  it('refuses a Slack URL at a private address on a relay that does not allow private destinations', async () => {
    const { key } = await signUp(strict.baseUrl);
    const problem = expectProblem(await api(strict.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: 'https://127.0.0.1:9/services/T/B/x' } }), 422, 'destination_not_allowed');
    expect(problem.detail).toContain('127.0.0.1');
    expect((await api(strict.baseUrl, 'GET', '/v1/account/alerts', { key })).body.slack).toBeNull();
  });

  it('refuses email addresses when the relay sends no email', async () => {
    const { key } = await signUp(strict.baseUrl);
    expect((await api(strict.baseUrl, 'GET', '/v1/account/alerts', { key })).body.email).toEqual({ to: [], available: false });
    const problem = expectProblem(await api(strict.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { email_to: ['ops@example.com'] } }), 422, 'alert_email_unavailable');
    expect(problem.detail).toContain('HOOK_SMTP_URL');
    expect(problem.fix).toContain('Slack');
  });
});

describe('alerts', () => {
  it('tells Slack and email once when a destination is disabled', async () => {
    const email = 'disabled@example.com';
    const { key, slack } = await alertedAccount({ email });
    const fine = await receiver();
    const gone = await receiver(() => ({ status: 410 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'orders', destination: { type: 'url', url: fine.url } });
    const added = await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'url', url: gone.url } } });
    expect(added.status).toBe(201);
    const destinationId = added.body.id as string;
    await sendEvent(ingestUrl(endpoint), '{"n":1}');

    const disabledPosts = () => slackPosts(slack).filter((post) => post.text.includes('Destination disabled'));
    await expect.poll(disabledPosts, { timeout: 15_000 }).toHaveLength(1);
    await expect.poll(() => mailsTo(email).filter((mail) => mail.subject.includes('Destination disabled')), { timeout: 15_000 }).toHaveLength(1);

    const [post] = disabledPosts();
    expect(post!.text).toContain(`${gone.url} (${destinationId})`);
    expect(post!.text).toContain('410 Gone');
    expect(post!.words).toContain(`orders (${endpoint.id})`);
    expect(post!.words).toContain(`<${PUBLIC_URL}/console#/endpoints/${endpoint.id}|See the endpoint>`);
    expect(post!.words).toContain(`hook destinations update ${destinationId} --status active`);

    const [mail] = mailsTo(email).filter((message) => message.subject.includes('Destination disabled'));
    expect(mail!.from).toBe('alerts@hook.example.test');
    expect(mail!.raw).toMatch(/^From: Hook alerts <alerts@hook\.example\.test>/m);
    expect(mail!.subject).toBe(`[Hook] Destination disabled: ${gone.url} (${destinationId}) gets no more deliveries because its receiver answered 410 Gone`);
    expect(mail!.text).toContain(`Endpoint: orders (${endpoint.id})`);
    expect(mail!.text).toContain(`See the endpoint: ${PUBLIC_URL}/console#/endpoints/${endpoint.id}`);

    // Recorded as sent, one per channel.
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key })).body.recent.filter((alert: any) => alert.type === 'destination.disabled')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel: 'slack', status: 'sent', attempts: 1, last_error: null, sent_at: expect.stringMatching(/Z$/) }),
        expect.objectContaining({ channel: 'email', status: 'sent', attempts: 1 }),
      ]),
    );
  });

  it('alerts when an issue opens, even without a notification URL', async () => {
    const email = 'issues@example.com';
    const { key, accountId, slack } = await alertedAccount({ email });
    const failing = await receiver(() => ({ status: 503 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'billing', destination: { type: 'url', url: failing.url } });
    await sendEvent(ingestUrl(endpoint), '{"n":1}');
    await sendEvent(ingestUrl(endpoint), '{"n":2}');

    const opened = () => slackPosts(slack).filter((post) => post.text.startsWith('Issue opened'));
    await expect.poll(opened, { timeout: 15_000 }).toHaveLength(1);
    const issues = await issuesOf(accountId, 'open');
    expect(issues).toHaveLength(1);
    const issue = { ...issues[0]!, title: issueTitle(issues[0]!.kind, issues[0]!.last_status) };
    const [post] = opened();
    expect(post!.text).toBe(`Issue opened: ${issue.title}`);
    expect(post!.words).toContain('*Last status:* 503');
    expect(post!.words).toContain(`<${PUBLIC_URL}/console#/issues/${issue.id}|See the issue>`);
    await expect.poll(() => mailsTo(email).map((mail) => mail.subject), { timeout: 15_000 }).toContain(`[Hook] Issue opened: ${issue.title}`);
    const mail = mailsTo(email).find((message) => message.subject.startsWith('[Hook] Issue opened'))!;
    expect(mail.text).toContain(`See the issue: ${PUBLIC_URL}/console#/issues/${issue.id}`);
    expect(mail.text).toContain(`Endpoint: billing (${endpoint.id})`);
    // More failures of the same issue alert no more.
    await sendEvent(ingestUrl(endpoint), '{"n":3}');
    await expect.poll(async () => (await issuesOf(accountId, 'open'))[0]!.failure_count, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    expect(opened()).toHaveLength(1);
  });

  it('sends one alert for a destination that flaps', async () => {
    const { key, accountId, slack } = await alertedAccount();
    // Each cycle's event fails once, then its retry is delivered.
    let failNext = false;
    const flapping = await receiver(() => {
      const status = failNext ? 500 : 200;
      failNext = false;
      return { status };
    });
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'flapping', destination: { type: 'url', url: flapping.url } });
    for (let cycle = 0; cycle < 5; cycle++) {
      failNext = true;
      const before = flapping.requests.length;
      await sendEvent(ingestUrl(endpoint), `{"cycle":${cycle}}`);
      await flapping.waitFor(before + 2);
      await expect.poll(() => issuesOf(accountId, 'open'), { timeout: 15_000 }).toHaveLength(1);
      // Resolved as a person would (POST /v1/issues/{id}/resolve): the next failure reopens it.
      await sqlRows(relay, "update issue set status = 'resolved', resolved_by = 'user', resolved_at = now() where account_id = ? and status = 'open'", [accountId]);
    }
    const [issue] = await issuesOf(accountId, 'resolved');
    expect(issue!.reopen_count).toBe(4);
    // Every cycle's notification has been drained: none is left in the outbox for this account.
    await expect.poll(async () => (await sqlRows(relay, 'select count(*)::int as n from notification_outbox where account_id = ?', [accountId]))[0].n).toBe(0);
    await expect.poll(async () => (await sqlRows(relay, "select count(*)::int as n from alert_outbox where account_id = ? and status = 'pending'", [accountId]))[0].n).toBe(0);
    expect(slackPosts(slack).map((post) => post.text)).toEqual([`Issue opened: ${issueTitle('http_5xx')}`]);
  });

  it(`sends at most ${ALERT_CHANNEL_LIMIT_PER_HOUR} alerts per channel per hour, and the next says how many were held back`, async () => {
    const { accountId, slack } = await alertedAccount();
    const notice = (n: number) => ({ accountId, type: 'destination.disabled' as const, data: { endpoint_id: 'ep_x', destination_id: `dst_${n}`, reason: 'failing' as const, consecutive_failures: 10, disabled_at: new Date().toISOString() } });
    await relay.orm.em.fork().transactional(async (em) => {
      for (let n = 0; n < 1000; n++) await enqueueNotification(em, notice(n));
    });
    await expect.poll(async () => (await sqlRows(relay, 'select held_back from alert_channel where account_id = ?', [accountId]))[0].held_back, { timeout: 20_000 }).toBe(1000 - ALERT_CHANNEL_LIMIT_PER_HOUR);
    await expect.poll(() => slack.requests.length, { timeout: 15_000 }).toBe(ALERT_CHANNEL_LIMIT_PER_HOUR);

    // An hour later (the sent alerts moved back in time), the next alert goes and counts the ones held back.
    await sqlRows(relay, "update alert_outbox set created_at = created_at - interval '61 minutes' where account_id = ?", [accountId]);
    const [{ since }] = await sqlRows(relay, `select to_char(held_back_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as since from alert_channel where account_id = ?`, [accountId]);
    await relay.orm.em.fork().transactional((em) => enqueueNotification(em, notice(1000)));
    await expect.poll(() => slack.requests.length, { timeout: 15_000 }).toBe(ALERT_CHANNEL_LIMIT_PER_HOUR + 1);
    const last = slackPosts(slack).at(-1)!;
    expect(last.words).toContain('dst_1000');
    expect(last.text).toContain(`…and ${1000 - ALERT_CHANNEL_LIMIT_PER_HOUR} more alerts since ${since}, held back by the limit of ${ALERT_CHANNEL_LIMIT_PER_HOUR} alerts per hour on this channel.`);
    expect((await sqlRows(relay, 'select held_back, held_back_since from alert_channel where account_id = ?', [accountId]))[0]).toEqual({ held_back: 0, held_back_since: null });
  });

  it('tries a failed Slack post again', async () => {
    const { key, slack } = await alertedAccount({ slackRespond: (_request, index) => (index === 0 ? { status: 500, body: 'x'.repeat(1000) } : { status: 200, body: 'ok' }) });
    const test = await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key });
    expect(test.status).toBe(200);
    expect(test.body).toEqual({ queued: ['slack'] });
    await slack.waitFor(2, 15_000);
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key })).body.recent).toEqual([
      expect.objectContaining({ channel: 'slack', type: 'test', status: 'sent', attempts: 2 }),
    ]);
    // The failed try's error was kept short (the answer cut at 200 characters) until the post went through.
    const [row] = await sqlRows(relay, "select last_error from alert_outbox where type = 'test' and account_id = (select account_id from alert_channel where slack_url_hint = ?)", [(await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key })).body.slack.url_hint]);
    expect(row.last_error).toBeNull();
  });

  it('gives up after five tries, keeping why', async () => {
    const { key, slack } = await alertedAccount({ slackRespond: () => ({ status: 500, body: `refused ${'x'.repeat(1000)}` }) });
    await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key });
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key })).body.recent[0], { timeout: 15_000 }).toMatchObject({ status: 'failed', attempts: 5 });
    expect(slack.requests).toHaveLength(5);
    const [failed] = (await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key })).body.recent;
    expect(failed.last_error).toMatch(/^Slack answered 500: refused x+$/);
    expect(failed.last_error.length).toBe(200);
  });

  it('sends a test alert to each channel', async () => {
    const email = 'test-alert@example.com';
    const { key, accountId, slack } = await alertedAccount({ email });
    const test = await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key });
    expect(test.body).toEqual({ queued: ['email', 'slack'] });
    await slack.waitFor(1, 15_000);
    expect(slackPosts(slack)[0]!.text).toBe(`Test alert from Hook: alerts of account ${accountId} reach this channel`);
    await expect.poll(() => mailsTo(email).map((mail) => mail.subject), { timeout: 15_000 }).toEqual([`[Hook] Test alert from Hook: alerts of account ${accountId} reach this channel`]);

    const { key: bare } = await signUp(relay.baseUrl);
    expect((await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key: bare })).body).toEqual({ queued: [] });
  });

  it(`allows ${ALERT_TESTS_PER_HOUR} test alerts an hour per account (they skip the channel limit)`, async () => {
    const { key } = await alertedAccount();
    for (let n = 0; n < ALERT_TESTS_PER_HOUR; n++) expect((await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key })).status).toBe(200);
    const refused = await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key });
    expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect((await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key: (await signUp(relay.baseUrl)).key })).status).toBe(200);
  });

  it('applies the private-address rule where it connects, whatever was checked when the URL was set', async () => {
    const slack = await receiver();
    const poster = new SlackPoster({ allowPrivateDestinations: false });
    try {
      const url = `${slack.url.replace('http:', 'https:')}/services/T/B/x`;
      const outcome = await poster.post(url, { text: 'hello', blocks: [] });
      expect(outcome).toEqual({ ok: false, error: expect.stringContaining('127.0.0.1, a private, loopback or link-local address') });
      expect(await poster.post(`${slack.url}/services/T/B/x`, { text: 'hello', blocks: [] })).toEqual({ ok: false, error: expect.stringContaining('must be an https:// URL') });
      expect(slack.requests).toHaveLength(0);
    } finally {
      await poster.close();
    }
  });

  it('removes the account\'s alerts with the account', async () => {
    const { key, accountId } = await alertedAccount();
    await api(relay.baseUrl, 'POST', '/v1/account/alerts/test', { key });
    const deleted = await api(relay.baseUrl, 'DELETE', `/v1/account?confirm=${accountId}`, { key });
    expect(deleted.status).toBeLessThan(300);
    await expect.poll(async () => (await sqlRows(relay, 'select (select count(*) from alert_outbox where account_id = ?)::int + (select count(*) from alert_channel where account_id = ?)::int as n', [accountId, accountId]))[0].n, { timeout: 20_000 }).toBe(0);
  });
});

describe('HOOK_SMTP_URL and HOOK_ALERT_EMAIL_FROM', () => {
  const base = { HOOK_SECRET_KEY: undefined };
  it('are read together', () => {
    const config = loadConfig({ ...base, HOOK_SMTP_URL: 'smtps://alerts%40example.com:p%40ss@smtp.example.com:465', HOOK_ALERT_EMAIL_FROM: 'Hook alerts <alerts@example.com>' });
    expect(config.smtpUrl).toBe('smtps://alerts%40example.com:p%40ss@smtp.example.com:465');
    expect(config.alertEmailFrom).toBe('Hook alerts <alerts@example.com>');
    expect(loadConfig(base)).toMatchObject({ smtpUrl: null, alertEmailFrom: null });
  });

  it('refuse to start with a clear message, without echoing the SMTP password', () => {
    expect(() => loadConfig({ HOOK_SMTP_URL: 'http://user:hunter2@smtp.example.com', HOOK_ALERT_EMAIL_FROM: 'alerts@example.com' })).toThrow(/HOOK_SMTP_URL="\(not shown\)" is not valid: expected a URL such as smtp:\/\//);
    expect(() => loadConfig({ HOOK_SMTP_URL: 'http://user:hunter2@smtp.example.com', HOOK_ALERT_EMAIL_FROM: 'alerts@example.com' })).not.toThrow(/hunter2/);
    expect(() => loadConfig({ HOOK_SMTP_URL: 'smtp://smtp.example.com:587' })).toThrow(/HOOK_ALERT_EMAIL_FROM is not set/);
    expect(() => loadConfig({ HOOK_ALERT_EMAIL_FROM: 'alerts@example.com' })).toThrow(/HOOK_SMTP_URL is not set/);
    expect(() => loadConfig({ HOOK_SMTP_URL: 'smtp://smtp.example.com:587', HOOK_ALERT_EMAIL_FROM: 'not an address' })).toThrow(/HOOK_ALERT_EMAIL_FROM="not an address" is not valid/);
  });
});
