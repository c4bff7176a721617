/**
 * The playground in a real browser: headless Chromium from npm (@sparticuz/chromium, see
 * support/browser.ts), driven by playwright-core, against a real relay. The screenshot is
 * kept in test/artifacts/ (not committed).
 */
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { api, sendEvent, startTestRelay, type TestRelay } from '../support/relay.ts';

const ARTIFACTS = new URL('../artifacts/', import.meta.url);

let relay: TestRelay;
let browser: Browser | undefined;
let page: Page;

beforeAll(async () => {
  relay = await startTestRelay();
});
browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  page = await browser.newPage();
  watch(page);
});
afterAll(async () => {
  await browser?.close();
  await relay?.close();
});

describe('the playground page in Chromium', () => {
  it('shows an ingest URL, lists events live, refuses an empty type, sends a valid one', async () => {
    await page.goto(`${relay.baseUrl}/playground`);
    await expect.poll(() => page.inputValue('#ingest-url')).toMatch(/\/v1\/ingest\/\S+$/);
    const ingestUrl = await page.inputValue('#ingest-url');
    expect(await page.textContent('#curl-example')).toContain(ingestUrl);
    await page.waitForSelector('#session-status:has-text("Live")');

    // Sent with plain HTTP, as curl would: the list shows it without a reload.
    const curlId = await sendEvent(ingestUrl, '{"from": "curl"}', { 'content-type': 'application/json', 'x-event-type': 'curl.sent', 'x-trace': 'abc' });
    const curlRow = page.locator(`#events li[data-event-id="${curlId}"]`);
    await curlRow.waitFor({ timeout: 5000 });
    expect(await curlRow.locator('.event-type').textContent()).toBe('curl.sent');
    expect(await curlRow.locator('.event-status').textContent()).toBe('pending');
    await curlRow.locator('summary').click();
    expect(await curlRow.locator('.event-body').textContent()).toContain('"from": "curl"');
    expect(await curlRow.locator('.event-headers').textContent()).toContain('x-trace: abc');

    // An empty type: refused on the page, focus on the field, nothing sent.
    await page.fill('#event-type', '');
    await page.click('#send-form button[type="submit"]');
    expect(await page.textContent('#send-error')).toBe('An event type cannot be empty');
    expect(await page.getAttribute('#event-type', 'aria-invalid')).toBe('true');
    expect(await page.locator('#event-type').evaluate((input) => input === input.ownerDocument.activeElement)).toBe(true);
    expect(await page.locator('#events li').count()).toBe(1);

    // A valid one, typed and submitted from the keyboard, shows up live.
    await page.fill('#event-type', 'order.created');
    await page.fill('#payload', '{"id": 42}');
    await page.press('#payload', 'Tab');
    await page.keyboard.press('Enter');
    const formRow = page.locator('#events li', { has: page.locator('.event-type', { hasText: 'order.created' }) });
    await formRow.waitFor({ timeout: 5000 });
    expect(await page.textContent('#send-error')).toBe('');
    expect(await page.locator('#events li').count()).toBe(2);
    expect(await page.locator('#events li').first().locator('.event-type').textContent()).toBe('order.created');

    await mkdir(ARTIFACTS, { recursive: true });
    const screenshot = await page.screenshot({ path: new URL('playground.png', ARTIFACTS).pathname, fullPage: true });
    expect(screenshot.length).toBeGreaterThan(10_000);
  });

  it('refuses a payload that is not JSON before sending it', async () => {
    await page.fill('#event-type', 'bad.payload');
    await page.fill('#payload', '{"id": ');
    await page.click('#send-form button[type="submit"]');
    expect(await page.textContent('#send-error')).toMatch(/^The payload is not valid JSON/);
    expect(await page.getAttribute('#payload', 'aria-invalid')).toBe('true');
    expect(await page.locator('#events li').count()).toBe(2);
  });

  it('claims the playground: an API key that reads the same events', async () => {
    await page.click('#claim-button');
    await page.waitForSelector('#claim-result:not([hidden])');
    const key = await page.inputValue('#api-key');
    expect(key).toMatch(/^hk_/);
    const events = await api(relay.baseUrl, 'GET', '/v1/events', { key });
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual(['order.created', 'curl.sent']);
  });
});
