/**
 * Issues in the web console, clicked through in headless Chromium against a real relay
 * with a delivery worker and a real receiver that answers 500: the failures show as one
 * issue under Open, the issue page shows its facts and events (each linking to the event),
 * Acknowledge moves it to its own tab, and once the receiver is fixed "Retry all" (after
 * its confirm) shows progress until every event is delivered and the issue resolved.
 * Screenshots in test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { saveScreenshot, signInToConsole } from '../support/console.ts';
import { eventually } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
let browser: Browser | undefined;
let page: Page;
let key: string;
let issueId: string;
const sent: string[] = [];

beforeAll(async () => {
  // Retries an hour apart: only the console's retry reaches the receiver again.
  relay = await startTestRelay({ allowPrivateDestinations: true, retryScheduleMs: [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000] }, { workerPollMs: 20 });
  receiver = await startReceiver(() => ({ status: 500 }));
  ({ key } = await signUp(relay.baseUrl));
  const orders = await createEndpoint(relay.baseUrl, key, { name: 'orders', destination: { type: 'url', url: `${receiver.url}/hooks` } });
  for (const n of [1, 2, 3]) sent.push(await sendEvent(orders.url, JSON.stringify({ type: 'order.created', n })));
  await receiver.waitFor(3);
  const issues = await eventually(async () => (await api(relay.baseUrl, 'GET', '/v1/issues', { key })).body.data, (data: any[]) => data[0]?.event_count === 3, 10_000, 'the issue');
  issueId = issues[0].id;
}, 120_000);
browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  watch(page);
  await signInToConsole(page, relay.baseUrl, key);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await relay?.close();
});

describe('issues in the console', () => {
  it('lists a failure as an open issue, linked from the navigation', async () => {
    await page.click('nav a[href="#/issues"]');
    const row = page.locator(`#issue-list tr[data-issue-id="${issueId}"]`);
    await row.waitFor();
    expect(await page.getAttribute('.issue-tabs a[href="#/issues?status=open"]', 'aria-current')).toBe('page');
    expect(await row.locator('th a').textContent()).toBe('Receiver answered 5xx');
    expect(await row.locator('.issue-status').textContent()).toBe('open');
    expect((await row.locator('.issue-status').getAttribute('class'))!.split(' ')).toEqual(expect.arrayContaining(['badge', 'error']));
    expect(await row.locator('.destination-cell').textContent()).toBe(`orders → ${receiver.url}/hooks`);
    expect(await row.locator('td.number').allTextContents()).toEqual(['3', '3']);
    // Relative times, the exact time on hover.
    const seen = row.locator('time').first();
    expect(await seen.textContent()).toMatch(/ago$|^now$/);
    expect(await seen.getAttribute('title')).toBeTruthy();
    expect(Date.parse((await seen.getAttribute('datetime'))!)).not.toBeNaN();
    await page.click('.issue-tabs a[href="#/issues?status=resolved"]');
    await page.waitForSelector('#issues-empty');
    expect(await page.textContent('#issues-empty')).toBe('No resolved issues.');
    await page.click('.issue-tabs a[href="#/issues?status=open"]');
    await row.waitFor();
    expect(await saveScreenshot(page, 'console-issues')).toBeGreaterThan(5000);
  });

  it('opens the issue: its facts and the events it covers, each linking to the event', async () => {
    await page.click(`#issue-list tr[data-issue-id="${issueId}"] th a`);
    await page.waitForSelector('#issue-events');
    expect(page.url()).toContain(`#/issues/${issueId}`);
    expect(await page.textContent('.issue-title')).toContain('Receiver answered 5xx');
    expect(await page.textContent('#issue-progress-counts')).toBe('0 of 3 delivered, 3 failing, 0 pending');
    expect(await page.textContent('.issue-facts')).toContain('answered 500');
    const links = await page.locator('#issue-events tbody th a').evaluateAll((anchors) => anchors.map((anchor) => anchor.getAttribute('href')));
    expect([...links].sort()).toEqual(sent.map((id) => `#/events/${id}`).sort());
    expect(await page.locator('#issue-events tbody tr').first().locator('.badge').textContent()).toBe('retrying');
  });

  it('acknowledges it: the button goes and the issue moves to the Acknowledged tab', async () => {
    await page.click('#acknowledge-issue');
    await expect.poll(() => page.textContent('.issue-title .issue-status')).toBe('acknowledged');
    expect(await page.locator('#acknowledge-issue').count()).toBe(0);
    await page.goto(`${relay.baseUrl}/console#/issues?status=acknowledged`);
    await page.locator(`#issue-list tr[data-issue-id="${issueId}"]`).waitFor();
    await page.goto(`${relay.baseUrl}/console#/issues/${issueId}`);
    await page.waitForSelector('#issue-events');
  });

  it('retries every event once the receiver is fixed: asks first, shows progress to done, and the issue becomes resolved', async () => {
    receiver.respond = () => ({ status: 200 });
    const before = receiver.requests.length;
    await page.click('button.retry-issue');
    const dialog = page.locator('dialog.confirm-dialog[open]');
    await dialog.waitFor();
    expect(await dialog.locator('h2').textContent()).toBe('Retry 3 events?');
    expect(receiver.requests.length).toBe(before); // nothing sent before the confirm
    await dialog.locator('.dialog-confirm').click();
    await page.waitForSelector('#retry-progress progress');
    await expect.poll(() => page.textContent('#retry-progress label'), { timeout: 20_000 }).toBe('Done: 3 of 3 delivered; the issue is resolved.');
    expect(await page.getAttribute('#retry-progress progress', 'value')).toBe('3');
    expect(await page.getAttribute('#retry-progress progress', 'max')).toBe('3');
    expect(await page.textContent('.issue-title .issue-status')).toBe('resolved');
    expect(await page.textContent('.issue-facts')).toContain('(every event delivered)');
    expect(receiver.requests.length - before).toBe(3);
    expect(await page.locator('#issue-events tbody .badge').allTextContents()).toEqual(['delivered', 'delivered', 'delivered']);
    expect(await page.locator('button.retry-issue').count()).toBe(0);
    expect(await saveScreenshot(page, 'console-issue-resolved')).toBeGreaterThan(5000);
  });

  it('opens an event from the issue', async () => {
    await page.click(`#issue-events a[href="#/events/${sent[0]}"]`);
    await expect.poll(() => page.url()).toContain(`#/events/${sent[0]}`);
  });
});

