/**
 * The console's events page in headless Chromium against a real relay, delivery worker
 * and receiver: the list and the event side by side at 1280 px and one in place of the
 * other at 375 px; j/k, Enter, Esc and / from the keyboard; a retrying delivery's next
 * attempt time; each attempt's request (signature headers included) and response
 * headers; JSON highlighting; copy buttons; relative times with the exact time on hover;
 * the dark theme from the switch. Screenshots go to test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { saveScreenshot, scrollsSideways } from '../support/console.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let key: string;
let shop: any;
/** Newest first, as the list shows them. */
let ids: string[] = [];
let failingId: string;
let jsonId: string;
const JSON_BODY = '{"name":"Ada","n":42,"ok":true,"none":null}';

beforeAll(async () => {
  // Retries two minutes apart: a failed first attempt leaves the delivery retrying.
  relay = await startTestRelay({ retryScheduleMs: [120_000, 120_000, 120_000], allowPrivateDestinations: true }, { workerPollMs: 50 });
  receiver = await startReceiver((request) => request.body.toString().includes('fail-me')
    ? { status: 500, body: 'nope' }
    : { status: 200, body: '{"ok":true}', headers: { 'content-type': 'application/json', 'x-receiver': 'yes' } });
  ({ key } = await signUp(relay.baseUrl));
  shop = await createEndpoint(relay.baseUrl, key, { name: 'shop', destination: { type: 'url', url: `${receiver.url}/hooks` } });
  const sent: string[] = [];
  for (let n = 0; n < 8; n++) sent.push(await sendEvent(shop.url, JSON.stringify({ n }), { 'content-type': 'application/json', 'x-event-type': `order.${n}` }));
  failingId = await sendEvent(shop.url, '{"fail-me": true}', { 'content-type': 'application/json', 'x-event-type': 'order.failing' });
  jsonId = await sendEvent(shop.url, JSON_BODY, { 'content-type': 'application/json', 'x-event-type': 'json.event' });
  ids = [...sent, failingId, jsonId].reverse();
  for (const id of ids) {
    const want = id === failingId ? 'retrying' : 'delivered';
    await vi.waitFor(async () => {
      const status = (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body.status;
      if (status !== want) throw new Error(`${id} is ${status}, not ${want} yet`);
    }, { timeout: 10_000, interval: 50 });
  }
}, 120_000);
browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: relay.baseUrl });
  page = await context.newPage();
  watch(page);
  await page.goto(`${relay.baseUrl}/console`);
  await page.fill('#api-key', key);
  await page.press('#api-key', 'Enter');
  await page.waitForSelector('.live.on');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await relay?.close();
});

const row = (id: string) => page.locator(`#event-list li[data-event-id="${id}"]`);
const activeEventId = () => page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('data-event-id') ?? (globalThis as any).document.activeElement?.id);

async function openList(): Promise<void> {
  await page.goto(`${relay.baseUrl}/console#/events`);
  await expect.poll(() => page.locator('#event-list li').count()).toBe(ids.length);
}

describe('events: list and detail', () => {
  it('shows the list and the event side by side at 1280 px', async () => {
    await openList();
    await row(ids[2]!).click();
    await page.waitForSelector(`.inspector[data-event-id="${ids[2]}"]`);
    expect(page.url()).toContain(`#/events/${ids[2]}`);
    expect(await row(ids[2]!).getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('#event-list [aria-selected="true"]').count()).toBe(1);
    const list = (await page.locator('.list-pane').boundingBox())!;
    const detail = (await page.locator('.detail-pane').boundingBox())!;
    expect(await page.locator('#event-list').isVisible()).toBe(true);
    expect(list.x + list.width).toBeLessThanOrEqual(detail.x + 1);
    expect(list.y).toBeLessThan(detail.y + detail.height);
    expect(detail.y).toBeLessThan(list.y + list.height);
    expect(list.width / (list.width + detail.width)).toBeGreaterThan(0.3);
    expect(list.width / (list.width + detail.width)).toBeLessThan(0.5);
    // The event pane scrolls on its own: its height is the window's, not its content's.
    expect(detail.height).toBeLessThanOrEqual(900);
    expect(await page.title()).toBe('order.7 · Events · Hook console');
    expect(await saveScreenshot(page, 'console-events-split')).toBeGreaterThan(5000);
  });

  it('puts the event in place of the list at 375 px, and Back returns to the row', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await openList();
      expect(await page.locator('.detail-pane').isVisible()).toBe(false);
      await row(ids[1]!).click();
      await page.waitForSelector(`.inspector[data-event-id="${ids[1]}"]`);
      expect(await page.locator('#event-list').isVisible()).toBe(false);
      await expect.poll(activeEventId).toBe('detail-heading');
      expect(await scrollsSideways(page)).toBe(false);
      expect(await saveScreenshot(page, 'console-375px-detail')).toBeGreaterThan(5000);
      await page.click('.back-link');
      await expect.poll(() => page.locator('#event-list').isVisible()).toBe(true);
      await expect.poll(activeEventId).toBe(ids[1]);
      // The navigation is in a menu on a narrow screen.
      expect(await page.locator('.sidebar nav').isVisible()).toBe(false);
      await page.click('.menu-button');
      expect(await page.getAttribute('.menu-button', 'aria-expanded')).toBe('true');
      expect(await page.locator('.sidebar nav').isVisible()).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('moves with j/k and the arrows, opens with Enter, closes with Esc, searches with /', async () => {
    await openList();
    await page.locator('body').click({ position: { x: 700, y: 5 } });
    await page.keyboard.press('j');
    await page.waitForSelector(`.inspector[data-event-id="${ids[0]}"]`);
    expect(page.url()).toContain(`#/events/${ids[0]}`);
    await expect.poll(activeEventId).toBe(ids[0]);
    await page.keyboard.press('j');
    await page.waitForSelector(`.inspector[data-event-id="${ids[1]}"]`);
    await page.keyboard.press('ArrowDown');
    await page.waitForSelector(`.inspector[data-event-id="${ids[2]}"]`);
    expect(await row(ids[2]!).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('k');
    await page.waitForSelector(`.inspector[data-event-id="${ids[1]}"]`);
    await expect.poll(activeEventId).toBe(ids[1]);
    expect(await page.locator('#event-list [aria-selected="true"]').count()).toBe(1);

    // Time from j to the next event's detail on the page (seen before, so from the cache the neighbour prefetch also fills).
    const stepMs = await page.evaluate((next) => new Promise<number>((resolve) => {
      const document = (globalThis as any).document;
      const started = performance.now();
      document.activeElement.dispatchEvent(new (globalThis as any).KeyboardEvent('keydown', { key: 'j', bubbles: true }));
      const check = () => (document.querySelector(`.inspector[data-event-id="${next}"]`) ? resolve(performance.now() - started) : (globalThis as any).requestAnimationFrame(check));
      check();
    }), ids[2]);
    process.stdout.write(`console: j to the next event's detail shown in ${stepMs.toFixed(1)} ms\n`);
    expect(stepMs).toBeLessThan(1000);

    await page.keyboard.press('Enter');
    await expect.poll(activeEventId).toBe('detail-heading');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.url()).toMatch(/#\/events$/);
    await expect.poll(() => page.locator('#event-list [aria-selected="true"]').count()).toBe(0);
    await expect.poll(() => page.locator('.inspector').count()).toBe(0);
    await expect.poll(activeEventId).toBe(ids[2]);
    await page.keyboard.press('/');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('name'))).toBe('q');
    // Typing in the search box types: j is a letter there, not a move.
    await page.keyboard.type('jk');
    expect(await page.inputValue('#filters input[name="q"]')).toBe('jk');
    expect(page.url()).toMatch(/#\/events$/);
  });
});

describe('events: the inspector', () => {
  it('says when a retrying delivery tries next', async () => {
    await page.goto(`${relay.baseUrl}/console#/events/${failingId}`);
    await page.waitForSelector(`.inspector[data-event-id="${failingId}"]`);
    const delivery = (await api(relay.baseUrl, 'GET', `/v1/events/${failingId}`, { key })).body.deliveries[0];
    expect(delivery.status).toBe('retrying');
    expect(await page.textContent('.delivery .status')).toBe('retrying');
    expect(await page.textContent('.delivery .next-attempt')).toMatch(/^Next attempt in 2 min \(\d{1,2}:\d{2}:\d{2}( [AP]M)?\)$/);
    expect(await page.getAttribute('.delivery .next-attempt time', 'datetime')).toBe(delivery.next_attempt_at);
    expect(await page.textContent('.delivery .attempt .attempt-status')).toBe('500');
  });

  it('shows the request Hook sent, signature headers included, and the response headers and body', async () => {
    await page.goto(`${relay.baseUrl}/console#/events/${jsonId}`);
    await page.waitForSelector(`.inspector[data-event-id="${jsonId}"]`);
    const attempt = (await api(relay.baseUrl, 'GET', `/v1/events/${jsonId}`, { key })).body.attempts[0];
    const signature = Object.entries(attempt.request.headers as Record<string, string>).find(([name]) => name === 'webhook-signature' || name === 'x-hook-signature');
    expect(signature).toBeDefined();
    await page.locator('.delivery .attempt summary').click();
    await expect.poll(() => page.locator('.delivery .request-headers').textContent()).toContain(`${signature![0]}: ${signature![1]}`);
    expect(await page.textContent('.delivery .request-headers')).toContain('content-type: application/json');
    expect(await page.textContent('.delivery .request-body-note')).toContain("the event's body");
    expect(await page.textContent('.delivery .response-headers')).toContain('x-receiver: yes');
    expect(await page.textContent('.delivery .response-body')).toBe(JSON.stringify({ ok: true }, null, 2));
    expect(await saveScreenshot(page, 'console-attempt-exchange')).toBeGreaterThan(5000);
  });

  it('highlights JSON with spans, shows it raw on request, and copies it', async () => {
    await page.goto(`${relay.baseUrl}/console#/events/${jsonId}`);
    await page.waitForSelector(`.inspector[data-event-id="${jsonId}"]`);
    const pretty = JSON.stringify(JSON.parse(JSON_BODY), null, 2);
    expect(await page.textContent('.event-body')).toBe(pretty);
    expect(await page.locator('.event-body .hljs-attr').allTextContents()).toEqual(['"name"', '"n"', '"ok"', '"none"']);
    expect(await page.locator('.event-body .hljs-string').allTextContents()).toEqual(['"Ada"']);
    expect(await page.locator('.event-body .hljs-number').allTextContents()).toEqual(['42']);
    expect(await page.locator('.event-body .hljs-literal').allTextContents()).toEqual(['true', 'null']);
    // tokens.css colours them: a key is not the colour of the text around it.
    const colours = await page.evaluate(() => {
      const style = (selector: string) => (globalThis as any).getComputedStyle((globalThis as any).document.querySelector(selector)).color;
      return { key: style('.event-body .hljs-attr'), text: style('.event-body') };
    });
    expect(colours.key).not.toBe(colours.text);

    const bodyTools = page.locator('.inspector > .body .body-tools');
    await bodyTools.getByRole('button', { name: 'Copy body' }).click();
    await expect.poll(() => bodyTools.locator('.copy-note').textContent()).toBe('Copied.');
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(pretty);
    await bodyTools.getByRole('button', { name: 'Raw' }).click();
    await expect.poll(() => page.textContent('.event-body')).toBe(JSON_BODY);
    expect(await page.locator('.event-body .hljs-attr').count()).toBe(0);
    await bodyTools.getByRole('button', { name: 'Copy body' }).click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(JSON_BODY);

    await page.getByRole('button', { name: 'Copy event ID' }).click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(jsonId);
  });

  it('shows ages as relative times that keep current, with the exact time on hover', async () => {
    const id = await sendEvent(shop.url, '{"fresh": true}', { 'content-type': 'application/json', 'x-event-type': 'fresh.event' });
    await page.goto(`${relay.baseUrl}/console#/events`);
    const time = row(id).locator('time');
    await time.waitFor();
    const event = (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
    expect(await time.getAttribute('datetime')).toBe(event.received_at);
    expect(await time.getAttribute('title')).toBe(await page.evaluate((at) => new Date(at).toLocaleString(), event.received_at));
    const first = (await time.textContent())!;
    expect(first).toMatch(/^(now|\d+ s ago)$/);
    await expect.poll(() => time.textContent(), { timeout: 12_000 }).not.toBe(first);
    expect(await time.textContent()).toMatch(/^\d+ s ago$/);
  });

  it('switches to the dark theme: data-theme is set and the colours change', async () => {
    await page.goto(`${relay.baseUrl}/console#/events`);
    await page.waitForSelector('[data-theme-toggle]');
    const background = () => page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor);
    const light = await background();
    for (let clicks = 0; clicks < 3 && await page.getAttribute('html', 'data-theme') !== 'dark'; clicks++) await page.click('[data-theme-toggle]');
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
    expect(await page.textContent('[data-theme-toggle]')).toBe('Theme: dark');
    expect(await background()).not.toBe(light);
    expect(await saveScreenshot(page, 'console-events-dark')).toBeGreaterThan(5000);
    // Still dark after a reload (the choice is kept).
    await page.reload();
    await page.waitForSelector('[data-theme-toggle]');
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
    await page.click('[data-theme-toggle]');
    expect(await page.getAttribute('html', 'data-theme')).toBeNull();
  });
});
