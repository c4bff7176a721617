/**
 * The web console's flows, clicked through in headless Chromium (support/browser.ts)
 * against a real relay with a delivery worker and a real receiver: sign in, endpoints
 * and their secret, the live event list with filters, search and older pages, an
 * event's inspector with copy as curl and replay, bulk replay, the account page, sign
 * out; and the playground's inspector. Each flow keeps a screenshot in test/artifacts/.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { saveScreenshot } from '../support/console.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

const run = promisify(execFile);

let relay: TestRelay;
let receiver: Receiver;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let key: string;
let orders: any;
let local: any;

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: [50], allowPrivateDestinations: true }, { workerPollMs: 50 });
  receiver = await startReceiver(() => ({ status: 200, body: 'thanks' }));
  ({ key } = await signUp(relay.baseUrl));
  orders = await createEndpoint(relay.baseUrl, key, { name: 'orders', destination: { type: 'url', url: `${receiver.url}/hooks` } });
  local = await createEndpoint(relay.baseUrl, key, { name: 'local' });
}, 120_000);
const suite = browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: relay.baseUrl });
  page = await context.newPage();
  watch(page);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await relay?.close();
});

const rows = () => page.locator('#event-list li');

describe('the console in Chromium', () => {
  it('signs in with an API key only: a bad key shows the error, the key never reaches a URL', async () => {
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    await page.goto(`${relay.baseUrl}/console`);
    await page.fill('#api-key', 'hk_not_a_real_key');
    await page.click('#signin-form button[type="submit"]');
    await expect.poll(() => page.textContent('#signin-error')).toMatch(/mistyped or revoked/);
    // The fix is in the console's words, not the REST API's.
    expect(await page.textContent('#signin-error')).not.toMatch(/\/v1\//);
    expect(await page.getAttribute('#api-key', 'aria-invalid')).toBe('true');
    expect(await saveScreenshot(page, 'console-signin')).toBeGreaterThan(5000);

    await page.fill('#api-key', key);
    await page.press('#api-key', 'Enter');
    await page.waitForSelector('#sign-out');
    await page.waitForSelector('.live.on');
    expect(urls.some((url) => url.includes(key))).toBe(false);
    expect(page.url()).not.toContain(key);
    const cookies = await context.cookies(relay.baseUrl);
    expect(cookies.length).toBeGreaterThan(0);
    expect(cookies.every((cookie) => cookie.httpOnly && cookie.sameSite === 'Strict' && !cookie.value.includes(key))).toBe(true);
  });

  it('lists endpoints with their ingest URL and destinations; reveals and rotates the secret after a confirm', async () => {
    await page.goto(`${relay.baseUrl}/console#/endpoints`);
    const card = page.locator(`.endpoint[data-endpoint-id="${orders.id}"]`);
    await card.waitFor();
    expect(await card.locator('.ingest-url').inputValue()).toBe(orders.url);
    expect(await card.locator('.destination-row').textContent()).toContain(`${receiver.url}/hooks`);
    expect(await card.locator('.destination-row .health').textContent()).toContain('healthy');
    await card.getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(orders.url);

    const before = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${orders.id}/secret`, { key })).body.secret;
    await card.locator('.reveal-secret').click();
    await expect.poll(() => card.locator('.secret-value').textContent()).toBe(before);
    await card.locator('.rotate-secret').click();
    await card.locator('.confirm-rotate').waitFor();
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${orders.id}/secret`, { key })).body.secret).toBe(before); // nothing before the confirm
    expect(await saveScreenshot(page, 'console-endpoints')).toBeGreaterThan(5000);
    await card.locator('.confirm-rotate').click();
    await expect.poll(() => card.locator('.secret-value').textContent()).not.toBe(before);
    const after = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${orders.id}/secret`, { key })).body;
    expect(await card.locator('.secret-value').textContent()).toBe(after.secret);
    expect(after.previous_secret).toBe(before);
  });

  it('lists events live at the top, filters them, searches payloads and pages to older ones', async () => {
    await page.goto(`${relay.baseUrl}/console#/events`);
    await page.waitForSelector('.live.on');
    for (let n = 0; n < 55; n++) await sendEvent(local.url, JSON.stringify({ n, note: n === 7 ? 'needle-in-a-payload' : 'hay' }), { 'content-type': 'application/json', 'x-event-type': n % 2 ? 'odd.event' : 'even.event' });
    const liveId = await sendEvent(orders.url, '{"live": true}', { 'content-type': 'application/json', 'x-event-type': 'invoice.paid' });
    await expect.poll(() => rows().first().getAttribute('data-event-id')).toBe(liveId);
    await expect.poll(() => rows().first().locator('.status').textContent()).toBe('delivered');

    // Keyset pagination: a page of 50, then the older ones after the last shown.
    await page.goto(`${relay.baseUrl}/console#/events?endpoint_id=${local.id}`);
    await expect.poll(() => rows().count()).toBe(50);
    await page.click('#older');
    await expect.poll(() => rows().count()).toBe(55);
    expect(await page.locator('#older').count()).toBe(0);

    // Filters from the form: type, then search in payloads.
    await page.fill('input[name="type"]', 'odd.event');
    await page.click('#filters button[type="submit"]');
    await expect.poll(() => rows().count()).toBe(27);
    expect(await rows().locator('.event-type').allTextContents()).toEqual(Array(27).fill('odd.event'));
    await page.fill('input[name="type"]', '');
    await page.fill('input[name="q"]', 'needle-in-a-payload');
    await page.click('#filters button[type="submit"]');
    await expect.poll(() => rows().count()).toBe(1);
    expect(page.url()).toContain('q=needle-in-a-payload');
    await page.goto(`${relay.baseUrl}/console#/events?endpoint_id=${local.id}&since=2099-01-01T00:00`);
    await page.waitForSelector('#events-empty');
    expect(await rows().count()).toBe(0);
    await page.goto(`${relay.baseUrl}/console#/events?endpoint_id=${local.id}&until=2000-01-01T00:00`);
    await page.waitForSelector('#events-empty');
    await page.goto(`${relay.baseUrl}/console#/events?endpoint_id=${local.id}&since=2000-01-01T00:00`);
    await expect.poll(() => rows().count()).toBe(50);
    await page.goto(`${relay.baseUrl}/console#/events?status=delivered`);
    await expect.poll(() => rows().count()).toBe(1);
    await page.goto(`${relay.baseUrl}/console#/events`);
    await expect.poll(() => rows().count()).toBe(50);
    expect(await saveScreenshot(page, 'console-events')).toBeGreaterThan(5000);

    // Scrolled down, new events wait behind a button instead of moving the list.
    await page.evaluate(() => (globalThis as any).scrollTo(0, (globalThis as any).document.body.scrollHeight));
    const firstBefore = await rows().first().getAttribute('data-event-id');
    const waitingId = await sendEvent(local.url, '{"later": 1}');
    await page.waitForSelector('#show-new');
    expect(await rows().first().getAttribute('data-event-id')).toBe(firstBefore);
    await page.click('#show-new');
    await expect.poll(() => rows().first().getAttribute('data-event-id')).toBe(waitingId);
  });

  it('inspects an event: body, headers, query, attempts; copy as curl re-sends it byte-exact; replay shows the result live', async () => {
    const body = '{"order":{"id":42,"lines":[1,2]},"note":"caf\u00e9 \'quoted\'"}';
    const id = await sendEvent(`${orders.url}/sub/path?source=test&x=1`, body, { 'content-type': 'application/json', 'x-event-type': 'order.created', 'x-trace': 'abc' });
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body.status).toBe('delivered');
    await page.goto(`${relay.baseUrl}/console#/events`);
    await page.click(`#event-list li[data-event-id="${id}"]`);
    await page.waitForSelector('.inspector');
    expect(await page.textContent('.event-body')).toBe(JSON.stringify(JSON.parse(body), null, 2));
    expect(await page.textContent('.event-headers')).toContain('x-trace: abc');
    expect(await page.locator('table.query').textContent()).toContain('source');
    expect(await page.locator('.delivery .attempt').count()).toBe(1);
    expect(await page.locator('.delivery .attempt .attempt-status').textContent()).toBe('200');

    await page.click('#copy-curl');
    const curl = await page.evaluate(() => (globalThis as any).navigator.clipboard.readText());
    expect(curl).toBe(await page.textContent('#curl-command'));
    const received = receiver.requests.length;
    const { stdout } = await run('sh', ['-c', curl]);
    const resent = JSON.parse(stdout).id as string;
    const copy = (await api(relay.baseUrl, 'GET', `/v1/events/${resent}`, { key })).body;
    const original = (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
    expect(copy.body).toBe(original.body);
    expect(copy.query).toBe(original.query);
    expect(copy.path).toBe(original.path);
    expect(copy.headers['x-trace']).toBe('abc');
    expect(copy.type).toBe('order.created');
    await receiver.waitFor(received + 1);

    // Replay to the destination: the receiver answers 503 now, and the page shows it without a reload.
    receiver.respond = () => ({ status: 503, body: 'down for maintenance' });
    await page.click('.delivery button.replay');
    await expect.poll(() => page.locator('.delivery .attempt').count()).toBe(2);
    await expect.poll(() => page.locator('.replay-result').textContent()).toMatch(/503/);
    expect(await page.locator('.delivery .attempt').last().locator('.attempt-status').textContent()).toBe('503');
    await page.locator('.delivery .attempt').last().locator('summary').click();
    expect(await page.locator('.delivery .attempt').last().locator('.response-body').textContent()).toBe('down for maintenance');
    expect(await saveScreenshot(page, 'console-event')).toBeGreaterThan(5000);
    receiver.respond = () => ({ status: 200, body: 'thanks' });
  });

  it('explains a pending event of a hook listen endpoint in CLI words', async () => {
    const id = await sendEvent(local.url, '{"waiting": true}');
    await page.goto(`${relay.baseUrl}/console#/events/${id}`);
    await page.waitForSelector('.inspector');
    expect(await page.textContent('.pending-reason')).toContain('hook listen 3000 --endpoint local');
  });

  it('replays failed events in bulk; their status changes live', async () => {
    receiver.respond = () => ({ status: 500, body: 'broken' });
    const failing = [
      await sendEvent(orders.url, '{"n": 1}', { 'content-type': 'application/json', 'x-event-type': 'bulk.test' }),
      await sendEvent(orders.url, '{"n": 2}', { 'content-type': 'application/json', 'x-event-type': 'bulk.test' }),
    ];
    for (const id of failing) await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body.status, { timeout: 10_000 }).toBe('failed');
    await page.goto(`${relay.baseUrl}/console#/events?type=bulk.test`);
    await expect.poll(() => rows().locator('.status').allTextContents()).toEqual(['failed', 'failed']);
    receiver.respond = () => ({ status: 200, body: 'fixed' });
    const failed = (await api(relay.baseUrl, 'GET', '/v1/events?status=failed', { key })).body.data.length; // these two and the one replayed to a 503 above
    expect(failed).toBe(3);
    await page.click('#replay-failed');
    await expect.poll(() => page.textContent('#bulk-note')).toContain(`Replaying ${failed} failed events`);
    await expect.poll(() => rows().locator('.status').allTextContents(), { timeout: 10_000 }).toEqual(['delivered', 'delivered']);
    expect(await saveScreenshot(page, 'console-bulk-replay')).toBeGreaterThan(5000);
  });

  it('shows the account: plan, usage against the allowance as a chart, members and keys', async () => {
    await page.goto(`${relay.baseUrl}/console#/account`);
    await page.waitForSelector('#usage-chart');
    expect(await page.textContent('#plan')).toBe('free');
    const account = (await api(relay.baseUrl, 'GET', '/v1/account', { key })).body;
    expect(await page.textContent('#usage-line')).toContain(`${account.usage.events_accepted.toLocaleString('en-US')} of ${account.limits.events_per_month.toLocaleString('en-US')} events`);
    expect(await page.locator('#usage-chart rect.bar').count()).toBe(30);
    const daily = (await api(relay.baseUrl, 'GET', '/v1/account/usage/daily?days=30', { key })).body.days;
    const total = daily.reduce((sum: number, day: { events: number }) => sum + day.events, 0);
    expect(total).toBe(account.usage.events_accepted);
    expect(await page.textContent('#usage-summary')).toContain(`${total.toLocaleString('en-US')} events in 30 days`);
    expect(await page.locator('#usage-chart polyline.rate').count()).toBe(1);
    expect(await page.locator('#usage-chart circle.rate-point').count()).toBe(daily.filter((day: { delivered: number; failed: number }) => day.delivered + day.failed > 0).length);
    expect(await page.locator('#members tbody tr').count()).toBe(1);
    expect(await page.locator('#keys tbody tr').count()).toBe(1);
    expect(await saveScreenshot(page, 'console-account')).toBeGreaterThan(5000);
  });

  it('signs out: the session ends and the sign-in form is back', async () => {
    await page.click('#sign-out');
    await page.waitForSelector('#signin-form');
    const status = await page.evaluate(async () => (await fetch('/console/session', { headers: { 'x-hook-console': '1' } })).status);
    expect(status).toBe(401);
  });
});

describe('the playground in Chromium: the console\'s inspector', () => {
  it('explains why an event is pending and, after claiming, shows the exact next command', async () => {
    const playground = await context.newPage();
    suite.watch(playground);
    await playground.goto(`${relay.baseUrl}/playground`);
    await playground.waitForSelector('#session-status:has-text("Live")');
    const ingestUrl = await playground.inputValue('#ingest-url');
    const id = await sendEvent(ingestUrl, 'name=Ada&role=admin', { 'content-type': 'application/x-www-form-urlencoded', 'x-event-type': 'form.sent' });
    const row = playground.locator(`#events li[data-event-id="${id}"]`);
    await row.locator('summary').click();
    await row.locator('.inspector').waitFor();
    expect(await row.locator('table.form-fields tbody').textContent()).toBe('nameAdaroleadmin');
    const reason = await row.locator('.pending-reason').textContent();
    expect(reason).toContain('no listener is connected');
    expect(reason).toContain('hook listen 3000');
    expect(reason).toContain(`--api-url ${relay.baseUrl}`);
    expect(await saveScreenshot(playground, 'playground-inspector')).toBeGreaterThan(5000);

    await playground.click('#claim-button');
    await playground.waitForSelector('#claim-result:not([hidden])');
    const apiKey = await playground.inputValue('#api-key');
    expect(await playground.textContent('#login-command')).toBe(`hook login --api-key ${apiKey} --api-url ${relay.baseUrl}`);
    expect(await row.locator('.pending-reason').textContent()).toContain('with the API key you got when claiming');
    expect(await saveScreenshot(playground, 'playground-claimed')).toBeGreaterThan(5000);
    await playground.close();
  });
});
