/**
 * The console under hostile payloads, for accessibility and at 375 px, in headless
 * Chromium against a real relay: no script from an event ever runs (a payload that did
 * would set window.__pwned or trip the CSP), a megabyte on one line and invalid UTF-8
 * render without freezing the page, axe-core finds no serious or critical violation on
 * any page, and no page scrolls sideways on a phone. Also measures (prints, does not
 * assert) the gaps between frames while 200 events/s arrive live.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { saveScreenshot, scrollsSideways, signInToConsole } from '../support/console.ts';
import { createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

const HOSTILE = '<script>window.__pwned = "script"</script>"><img src=x onerror="window.__pwned = \'img\'"><svg onload="window.__pwned = \'svg\'">';

let relay: TestRelay;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let key: string;
let endpoint: any;
const ids: Record<string, string> = {};

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true });
  ({ key } = await signUp(relay.baseUrl));
  endpoint = await createEndpoint(relay.baseUrl, key, { name: 'hostile' });
  ids.html = await sendEvent(`${endpoint.url}?q=${encodeURIComponent(HOSTILE)}`, HOSTILE, { 'content-type': 'text/html', 'x-event-type': HOSTILE, 'x-evil': HOSTILE });
  ids.json = await sendEvent(endpoint.url, JSON.stringify({ html: HOSTILE }), { 'content-type': 'application/json', 'x-event-type': 'json.hostile' });
  ids.xml = await sendEvent(endpoint.url, `<a><b>${HOSTILE.replace(/</g, '&lt;')}</b><c/></a>`, { 'content-type': 'application/xml', 'x-event-type': 'xml.event' });
  ids.huge = await sendEvent(endpoint.url, `"${'x'.repeat(1024 * 1024 - 2)}"`, { 'content-type': 'text/plain', 'x-event-type': 'huge.line' });
  ids.binary = await sendEvent(endpoint.url, Buffer.from([0xff, 0xfe, 0x3c, 0x73, 0x63, 0x72, 0x69, 0x70, 0x74, 0x3e, 0x00, 0xc3, 0x28, 0x80]), { 'content-type': 'application/octet-stream', 'x-event-type': 'binary.event' });
}, 120_000);
browserSuite(async (suite) => {
  browser = await launchBrowser();
  // One context and page for the file: the test browser runs as one process (--single-process),
  // where closing a context can bring it down and contexts share one cookie store.
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  await context.addInitScript(() => {
    (globalThis as any).__cspViolations = [];
    (globalThis as any).document.addEventListener('securitypolicyviolation', (violation: any) => (globalThis as any).__cspViolations.push(`${violation.violatedDirective}: ${violation.sample}`));
  });
  page = await context.newPage();
  suite.watch(page);
  await signIn();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await relay?.close();
});

/** Signs the page in through the sign-in form (again after a test signed it out). */
async function signIn(): Promise<void> {
  await signInToConsole(page, relay.baseUrl, key);
}

async function openEvent(page: Page, id: string): Promise<void> {
  await page.goto(`${relay.baseUrl}/console#/events/${id}`);
  await page.waitForSelector(`.inspector[data-event-id="${id}"]`);
}

describe('hostile payloads', () => {
  it('never runs a script from an event: body, headers, type and query render as text under the CSP', async () => {
    await page.goto(`${relay.baseUrl}/console#/events`);
    await page.waitForSelector(`#event-list li[data-event-id="${ids.html}"]`);
    expect(await page.locator(`#event-list li[data-event-id="${ids.html}"] .event-type`).textContent()).toBe(HOSTILE);
    for (const name of ['html', 'json', 'xml']) await openEvent(page, ids[name]!);
    await openEvent(page, ids.html!);
    expect(await page.textContent('.event-body')).toBe(HOSTILE);
    expect(await page.textContent('.event-headers')).toContain(`x-evil: ${HOSTILE}`);
    expect(await page.textContent('table.query')).toContain(HOSTILE);
    expect(await page.textContent('.event-title')).toContain(HOSTILE);
    expect(await page.locator('.inspector img, .inspector script, .inspector svg').count()).toBe(0);
    expect(await saveScreenshot(page, 'console-hostile')).toBeGreaterThan(5000);
    expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
    expect(await page.evaluate(() => (globalThis as any).__cspViolations)).toEqual([]);
  });

  it('renders a megabyte on one line capped, with "Show all", without freezing; invalid UTF-8 as a hex dump', async () => {
    const started = Date.now();
    await openEvent(page, ids.huge!);
    expect((await page.textContent('.event-body'))!.length).toBe(64 * 1024);
    expect(await page.textContent('.inspector')).toContain('Showing the first 65,536 of 1,048,576 characters');
    // The page still answers at once: a frozen main thread would hold this evaluate.
    expect(await page.evaluate(() => new Promise<number>((resolve) => { const at = performance.now(); (globalThis as any).requestAnimationFrame(() => resolve(performance.now() - at)); }))).toBeLessThan(1000);
    await page.getByRole('button', { name: 'Show all' }).click();
    await expect.poll(async () => (await page.textContent('.event-body'))!.length).toBe(1024 * 1024);
    process.stdout.write(`console: 1 MiB one-line body opened and shown whole in ${Date.now() - started} ms\n`);

    await openEvent(page, ids.binary!);
    const dump = await page.textContent('.event-body.hex');
    expect(dump).toBe('00000000  ff fe 3c 73 63 72 69 70 74 3e 00 c3 28 80        ..<script>..(.');
    expect(await page.textContent('.inspector')).toContain('Not valid UTF-8');
    expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
    expect(await page.evaluate(() => (globalThis as any).__cspViolations)).toEqual([]);
  });
});

const PAGES = ['#/events', `#/events/ID`, '#/endpoints', '#/account'];

async function visit(page: Page, route: string): Promise<void> {
  await page.goto(`${relay.baseUrl}/console${route.replace('ID', ids.json!)}`);
  await page.waitForSelector('#sign-out');
  await page.waitForSelector(route === '#/account' ? '#usage-chart' : route === '#/endpoints' ? '.endpoint' : route.includes('ID') ? '.inspector' : '#event-list li');
}

describe('accessibility and small screens', () => {
  it('axe-core finds no serious or critical violation on any page, signed out or in, nor on the playground', async () => {
    const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    const check = async (name: string) => {
      // Evaluated through the DevTools protocol, which the page's CSP does not govern (a <script> tag would be refused).
      await page.evaluate(axeSource);
      const results = await page.evaluate(async () => (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }));
      const bad = results.violations.filter((violation: { impact: string }) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((violation: { id: string; nodes: { target: string[] }[] }) => `${name}: ${violation.id} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
      return bad;
    };
    const found: string[] = [];
    for (const route of PAGES) {
      await visit(page, route);
      found.push(...await check(route));
    }
    await page.goto(`${relay.baseUrl}/playground`);
    await page.waitForSelector('#session-status:has-text("Live")');
    found.push(...await check('/playground'));
    // Signed out through the page (the test browser's contexts share one cookie store: it runs as one process).
    await visit(page, '#/events');
    await page.click('#sign-out');
    await page.waitForSelector('#signin-form');
    found.push(...await check('sign in'));
    await signIn();
    expect(found).toEqual([]);
  });

  it('no page scrolls sideways at 375 px', async () => {
    await page.setViewportSize({ width: 375, height: 900 });
    const wide: string[] = [];
    for (const route of PAGES) {
      await visit(page, route);
      if (await scrollsSideways(page)) wide.push(route);
    }
    await openEvent(page, ids.huge!);
    if (await scrollsSideways(page)) wide.push('1 MiB event');
    await openEvent(page, ids.binary!);
    if (await scrollsSideways(page)) wide.push('binary event');
    expect(await saveScreenshot(page, 'console-375px-event')).toBeGreaterThan(5000);
    await visit(page, '#/events');
    expect(await saveScreenshot(page, 'console-375px-events')).toBeGreaterThan(5000);
    await page.goto(`${relay.baseUrl}/playground`);
    await page.waitForSelector('#session-status:has-text("Live")');
    if (await scrollsSideways(page)) wide.push('playground');
    await visit(page, '#/events');
    await page.click('#sign-out');
    await page.waitForSelector('#signin-form');
    if (await scrollsSideways(page)) wide.push('sign in');
    await page.setViewportSize({ width: 1200, height: 900 });
    await signIn();
    expect(wide).toEqual([]);
  });
});

describe('responsiveness under live load (measured, not asserted as a timing)', () => {
  it('takes 200 events/s for 10 s: the list keeps up and the gaps between frames are printed', async () => {
    await page.goto(`${relay.baseUrl}/console#/events`);
    await page.waitForSelector('.live.on');
    // The main thread seen through the gaps between animation frames: a long task holds the next frame back
    // (this headless Chromium reports no 'longtask' entries to a PerformanceObserver).
    await page.evaluate(() => {
      const page = globalThis as any;
      page.__frameGaps = [];
      let last = performance.now();
      const frame = (now: number) => { page.__frameGaps.push(now - last); last = now; if (!page.__stopFrames) page.requestAnimationFrame(frame); };
      page.requestAnimationFrame(frame);
      // A known 250 ms task, to prove the gaps show one in this browser (left out of the figures below).
      page.setTimeout(() => { const until = performance.now() + 250; while (performance.now() < until) { /* busy */ } }, 50);
    });
    await expect.poll(() => page.evaluate(() => Math.max(0, ...(globalThis as any).__frameGaps))).toBeGreaterThan(150);
    await page.evaluate(() => { (globalThis as any).__frameGaps = []; });
    const RATE_PER_S = 200;
    const SECONDS = 10;
    const startedAt = Date.now();
    const sent: Promise<string>[] = [];
    for (let tick = 0; tick < RATE_PER_S * SECONDS / 10; tick++) {
      const due = startedAt + tick * 50;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      for (let n = 0; n < 10; n++) sent.push(sendEvent(endpoint.url, JSON.stringify({ tick, n }), { 'content-type': 'application/json', 'x-event-type': 'load.event' }));
    }
    const lastId = (await Promise.all(sent)).sort().at(-1);
    const sendSeconds = (Date.now() - startedAt) / 1000;
    await expect.poll(() => page.locator(`#event-list li[data-event-id="${lastId}"]`).count(), { timeout: 15_000 }).toBe(1);
    const rafLatencyMs = await page.evaluate(() => new Promise<number>((resolve) => { const at = performance.now(); (globalThis as any).requestAnimationFrame(() => resolve(performance.now() - at)); }));
    const frameGaps: number[] = await page.evaluate(() => { (globalThis as any).__stopFrames = true; return (globalThis as any).__frameGaps; });
    const sortedGaps = [...frameGaps].sort((a, b) => a - b);
    const rows = await page.locator('#event-list li').count();
    process.stdout.write(`console under load: ${RATE_PER_S * SECONDS} events in ${sendSeconds.toFixed(1)} s; ${frameGaps.length} frames, ${frameGaps.filter((gap) => gap > 50).length} gaps over 50 ms, gap p50 ${Math.round(sortedGaps[Math.floor(sortedGaps.length / 2)] ?? 0)} ms, p99 ${Math.round(sortedGaps[Math.floor(sortedGaps.length * 0.99)] ?? 0)} ms, max ${Math.round(sortedGaps.at(-1) ?? 0)} ms; ${rows} rows shown; next frame after ${rafLatencyMs.toFixed(0)} ms\n`);
    expect(rows).toBeLessThanOrEqual(500);
  }, 60_000);
});
