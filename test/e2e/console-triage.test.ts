/**
 * Failure triage from start to end, clicked through in headless Chromium against a real
 * relay, a real receiver on a local port, a local Slack receiver and a real SMTP server
 * (npm smtp-server): the alert channels are set in the console, an endpoint and its
 * destination are made in the console, the receiver fails and the failure becomes an
 * issue, the alert arrives on Slack and by email, the receiver is fixed, the issue is
 * retried from the console and resolves. Each step's detail is tested in its own file
 * (console-editing, console-issues, alerts, issues); this is the path a user takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { saveScreenshot, signInToConsole } from '../support/console.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-server.ts';

let relay: TestRelay;
let receiver: Receiver;
let slack: Receiver;
let inbox: SmtpInbox;
let browser: Browser | undefined;
let page: Page;
let key: string;
let endpoint: { id: string; url: string };
let issueId: string;
const sent: string[] = [];

beforeAll(async () => {
  inbox = await startSmtpInbox();
  // Automatic retries an hour apart: only the console's retry reaches the receiver again.
  relay = await startTestRelay({
    allowPrivateDestinations: true,
    retryScheduleMs: [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000],
    smtpUrl: inbox.url,
    alertEmailFrom: 'Hook alerts <alerts@hook.example.test>',
  }, { workerPollMs: 20 });
  receiver = await startReceiver(() => ({ status: 503, body: 'down for maintenance' }));
  slack = await startReceiver(() => ({ status: 200, body: 'ok' }));
  ({ key } = await signUp(relay.baseUrl));
}, 120_000);
browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  watch(page);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await slack?.close();
  await inbox?.close();
  await relay?.close();
});

describe('failure triage in the console, from a new endpoint to a resolved issue', () => {
  it('sets the alert channels: Slack and email', async () => {
    await signInToConsole(page, relay.baseUrl, key);
    await page.goto(`${relay.baseUrl}/console#/account`);
    await page.waitForSelector('#alerts-form');
    await page.fill('#alerts-slack', `${slack.url}/services/T000/B000/TRIAGE`);
    await page.fill('#alerts-email', 'oncall@example.com');
    await page.click('#alerts-form button[type="submit"]');
    await expect.poll(() => page.textContent('#alert-slack')).toContain('IAGE');
    expect(await page.textContent('#alert-email')).toBe('oncall@example.com');
  });

  it('creates an endpoint and adds a URL destination to it', async () => {
    await page.goto(`${relay.baseUrl}/console#/endpoints`);
    await page.fill('#new-endpoint-name', 'payments');
    await page.click('#new-endpoint-form button[type="submit"]');
    await page.waitForSelector('#created-url');
    const url = await page.inputValue('#created-url');
    endpoint = (await api(relay.baseUrl, 'GET', '/v1/endpoints', { key })).body.data.find((candidate: any) => candidate.name === 'payments');
    expect(url).toBe(endpoint.url);

    await page.goto(`${relay.baseUrl}/console#/endpoints/${endpoint.id}`);
    await page.click('.add-destination');
    await page.fill('#add-destination-url', `${receiver.url}/payments`);
    await page.click('#add-destination button[type="submit"]');
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/destinations`, { key })).body.data
      .map((destination: any) => destination.destination.url)).toContain(`${receiver.url}/payments`);
  });

  it('a failing receiver: the failure becomes an open issue in the console', async () => {
    for (const n of [1, 2]) sent.push(await sendEvent(endpoint.url, JSON.stringify({ type: 'payment.succeeded', n })));
    await receiver.waitFor(2);
    await page.goto(`${relay.baseUrl}/console#/issues`);
    const row = page.locator('#issue-list tr[data-issue-id]');
    await expect.poll(async () => {
      await page.reload();
      await page.waitForSelector('#issue-list, #issues-empty');
      return row.count();
    }, { timeout: 15_000 }).toBe(1);
    issueId = (await row.getAttribute('data-issue-id'))!;
    expect(await row.locator('th a').textContent()).toBe('Receiver answered 5xx');
    expect(await row.locator('.issue-status').textContent()).toBe('open');
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/issues/${issueId}`, { key })).body.event_count).toBe(2);
  });

  it('the issue alerts once, on Slack and by email, naming the failure, the issue and the commands that triage it', async () => {
    await slack.waitFor(1, 15_000);
    const post = JSON.parse(slack.requests[0]!.body.toString());
    expect(slack.requests[0]!.url).toMatch(/\/services\/T000\/B000\/TRIAGE$/);
    expect(post.text).toBe('Issue opened: Receiver answered 5xx');
    expect(JSON.stringify(post.blocks)).toContain(`hook issues retry ${issueId}`);
    await expect.poll(() => inbox.messages.length, { timeout: 15_000 }).toBe(1);
    const [mail] = inbox.messages;
    expect(mail!.to).toEqual(['oncall@example.com']);
    expect(mail!.subject).toContain('Issue opened: Receiver answered 5xx');
    expect(mail!.text).toContain(`hook issues get ${issueId}`);
    expect(slack.requests.length).toBe(1); // the second failure joined the issue: no second alert
  });

  it('once the receiver is fixed, retrying the issue delivers every event and the issue resolves', async () => {
    receiver.respond = () => ({ status: 200 });
    await page.click(`#issue-list tr[data-issue-id="${issueId}"] th a`);
    await page.waitForSelector('#issue-events');
    await page.click('button.retry-issue');
    const dialog = page.locator('dialog.confirm-dialog[open]');
    await dialog.waitFor();
    expect(await dialog.locator('h2').textContent()).toBe('Retry 2 events?');
    await dialog.locator('.dialog-confirm').click();
    await expect.poll(() => page.textContent('#retry-progress label'), { timeout: 20_000 }).toBe('Done: 2 of 2 delivered; the issue is resolved.');
    expect(await page.textContent('.issue-title .issue-status')).toBe('resolved');
    for (const id of sent) {
      const { deliveries } = (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
      expect(deliveries.find((delivery: any) => delivery.destination?.url === `${receiver.url}/payments`).status).toBe('delivered');
    }
    const issue = (await api(relay.baseUrl, 'GET', `/v1/issues/${issueId}`, { key })).body;
    expect(issue).toMatchObject({ status: 'resolved', resolved_by: 'auto', events: { total: 2, delivered: 2, failing: 0, pending: 0 } });
    expect(await saveScreenshot(page, 'console-triage-resolved')).toBeGreaterThan(5000);
  });
});
