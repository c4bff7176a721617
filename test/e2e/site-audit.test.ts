/**
 * Every page the relay serves to people, audited in headless Chromium (support/browser.ts)
 * against a real relay with a delivery worker and real receivers: at 1280 and 375 px, in
 * the light and the dark colour scheme, a full-page screenshot in
 * test/artifacts/<page>-<width>-<theme>.png and axe-core with no serious or critical
 * violation (support/audit.ts; the assertion lists each one with its selector and fix).
 *
 * The account has two endpoints, one delivering to a receiver that answers 200 and one to
 * a receiver that answers 503 (so its events fail and an issue opens), and events with JSON
 * bodies on both.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { formatViolations, saveAuditScreenshot, seriousViolations, useTheme, type Theme } from '../support/audit.ts';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

interface AuditedPage {
  /** The artifact's name: test/artifacts/<name>-<width>-<theme>.png */
  name: string;
  /** The path (with its hash route) once the account is seeded. */
  path: () => string;
  /** Visited with the console's session cookie. */
  signedIn: boolean;
  /** Resolves once the page shows what it is about (its data loaded, not a placeholder). */
  ready: (page: Page) => Promise<unknown>;
}

const WIDTHS = [1280, 375] as const;
const THEMES: Theme[] = ['light', 'dark'];
/** Text the pages show while their data loads: no page is audited while it says one. */
const PLACEHOLDER = /Loading|Starting a playground/;

let relay: TestRelay;
let healthy: Receiver;
let failing: Receiver;
let anonymousBrowser: Browser | undefined;
let sessionBrowser: Browser | undefined;
let signedOut: Page;
let signedIn: Page;
let key: string;
let orders: any;
let billing: any;
let eventId: string;
let issue: { id: string; title: string };

const shown = (selector: string) => (page: Page) => page.locator(selector).first().waitFor({ timeout: 15_000 });
const PAGES: AuditedPage[] = [
  { name: 'landing', path: () => '/', signedIn: false, ready: shown('main h1') },
  { name: 'docs-index', path: () => '/docs/', signedIn: false, ready: shown('main h1') },
  { name: 'docs-quickstart', path: () => '/docs/quickstart', signedIn: false, ready: shown('main h1') },
  { name: 'docs-api', path: () => '/docs/api', signedIn: false, ready: shown('main h1') },
  {
    name: 'playground', path: () => '/playground', signedIn: false,
    ready: (page) => page.waitForFunction(() => (globalThis as any).document.querySelector('#ingest-url')?.value.startsWith('http'), undefined, { timeout: 15_000 }),
  },
  { name: 'console-signin', path: () => '/console', signedIn: false, ready: shown('#api-key') },
  { name: 'console-events', path: () => '/console#/events', signedIn: true, ready: (page) => shown(`[data-event-id="${eventId}"]`)(page) },
  { name: 'console-event', path: () => `/console#/events/${eventId}`, signedIn: true, ready: (page) => shown(`main >> text=${eventId}`)(page) },
  { name: 'console-endpoints', path: () => '/console#/endpoints', signedIn: true, ready: shown('main >> text=billing') },
  { name: 'console-endpoint', path: () => `/console#/endpoints/${orders.id}`, signedIn: true, ready: shown('main h1:has-text("orders")') },
  { name: 'console-issues', path: () => '/console#/issues', signedIn: true, ready: (page) => shown(`main >> text=${issue.title}`)(page) },
  { name: 'console-issue', path: () => `/console#/issues/${issue.id}`, signedIn: true, ready: (page) => shown(`main h1:has-text("${issue.title}")`)(page) },
  { name: 'console-account', path: () => '/console#/account', signedIn: true, ready: shown('main h1') },
];

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: [20, 20], allowPrivateDestinations: true }, { workerPollMs: 20 });
  healthy = await startReceiver(() => ({ status: 200, body: '{"ok":true}', headers: { 'content-type': 'application/json' } }));
  failing = await startReceiver(() => ({ status: 503, body: 'down for maintenance' }));
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
  orders = await createEndpoint(relay.baseUrl, key, { name: 'orders', destination: { type: 'url', url: `${healthy.url}/hooks/orders` } });
  billing = await createEndpoint(relay.baseUrl, key, { name: 'billing', destination: { type: 'url', url: `${failing.url}/hooks/billing` } });
  for (let n = 0; n < 6; n++) {
    await sendEvent(orders.url, JSON.stringify({ id: `ord_${n}`, type: 'order.created', amount: 1200 + n, items: [{ sku: 'tee', qty: n + 1 }], paid: n % 2 === 0, note: null }), { 'content-type': 'application/json', 'x-event-type': 'order.created' });
  }
  for (let n = 0; n < 3; n++) {
    await sendEvent(billing.url, JSON.stringify({ id: `inv_${n}`, type: 'invoice.failed', amount_due: 4200, customer: { id: `cus_${n}`, email: `buyer${n}@example.com` } }), { 'content-type': 'application/json', 'x-event-type': 'invoice.failed' });
  }
  eventId = await sendEvent(orders.url, JSON.stringify({ id: 'ord_audit', type: 'order.paid', amount: 4200, currency: 'eur', customer: { id: 'cus_9', name: 'Ada' }, lines: [1, 2, 3] }), { 'content-type': 'application/json', 'x-event-type': 'order.paid' });
  // The failing endpoint's events give up after their retries: a failure the console shows, and an issue.
  await vi.waitFor(async () => expect((await api(relay.baseUrl, 'GET', `/v1/events?endpoint_id=${billing.id}&status=failed`, { key })).body.data).toHaveLength(3), { timeout: 30_000, interval: 50 });
  if (PAGES.some((audited) => audited.name === 'console-issue')) {
    issue = await vi.waitFor(async () => {
      const issues = await api(relay.baseUrl, 'GET', '/v1/issues', { key });
      expect(issues.body?.data?.length).toBeGreaterThan(0);
      return issues.body.data[0];
    }, { timeout: 30_000, interval: 50 });
  }
}, 120_000);

browserSuite(async ({ watch }) => {
  // Two browsers, not two contexts of one: with @sparticuz/chromium's --single-process flag,
  // a cookie set in one context's page can land in another context's jar (the first made),
  // which signed the "signed-out" pages in.
  anonymousBrowser = await launchBrowser();
  sessionBrowser = await launchBrowser();
  signedOut = await (await anonymousBrowser.newContext()).newPage();
  signedIn = await (await sessionBrowser.newContext()).newPage();
  watch(signedOut);
  watch(signedIn);
  // Signed in as the console's form does it (POST /console/session from the page), without depending on the form's markup.
  await signedIn.goto(`${relay.baseUrl}/console`);
  const status = await signedIn.evaluate(async (apiKey) => (await fetch('/console/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey }) })).status, key);
  if (status !== 204) throw new Error(`console sign-in answered ${status}`);
}, 120_000);

afterAll(async () => {
  await anonymousBrowser?.close();
  await sessionBrowser?.close();
  await healthy?.close();
  await failing?.close();
  await relay?.close();
});

/** Loads the page afresh and waits until it shows its data, its fonts are in and a frame has been painted. */
async function visit(page: Page, audited: AuditedPage): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${relay.baseUrl}${audited.path()}`);
  await audited.ready(page);
  // A signed-in page that shows the sign-in form instead would pass its audit unseen.
  if (audited.signedIn) expect(await page.locator('#api-key').count()).toBe(0);
  await expect.poll(() => page.evaluate(() => (globalThis as any).document.querySelector('main')?.textContent ?? ''), { timeout: 15_000 }).not.toMatch(PLACEHOLDER);
  await page.evaluate(() => Promise.all([
    (globalThis as any).document.fonts.ready,
    new Promise((done) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(done))),
  ]));
}

describe('every page at 1280 and 375 px, light and dark: a screenshot, and no serious or critical axe-core violation', () => {
  for (const audited of PAGES) {
    for (const width of WIDTHS) {
      for (const theme of THEMES) {
        it(`${audited.name} at ${width} px, ${theme}`, async () => {
          const page = audited.signedIn ? signedIn : signedOut;
          await page.setViewportSize({ width, height: width === 375 ? 812 : 900 });
          await useTheme(page, theme);
          try {
            await visit(page, audited);
          } finally {
            // Kept even when the page never got ready: the screenshot shows what it showed instead.
            await saveAuditScreenshot(page, audited.name, width, theme);
          }
          expect(await page.evaluate(() => (globalThis as any).matchMedia('(prefers-color-scheme: dark)').matches)).toBe(theme === 'dark');
          const screenshot = await saveAuditScreenshot(page, audited.name, width, theme);
          expect(screenshot.bytes).toBeGreaterThan(5000);
          expect(formatViolations(await seriousViolations(page))).toBe('');
        }, 60_000);
      }
    }
  }
});
