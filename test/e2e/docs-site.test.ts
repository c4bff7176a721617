/**
 * The docs site (/docs/, rendered from docs/*.md) and the landing page in headless
 * Chromium (support/browser.ts) against a real relay: reading order, links between pages,
 * heading anchors, highlighted code and its copy button, the search box from the
 * keyboard, the narrow layout, and not one CSP violation on the way.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let browser: Browser | undefined;
let page: Page;
/** CSP violations reported by the pages (event and console), all tests long. */
const violations: string[] = [];

beforeAll(async () => {
  relay = await startTestRelay();
});
browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  watch(page);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: relay.baseUrl });
  // Runs over the DevTools protocol, before each page's own scripts: the CSP does not apply to it.
  await page.addInitScript(() => {
    (globalThis as any).document.addEventListener('securitypolicyviolation', (event: any) =>
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI} ${event.sample}`));
  });
  page.on('console', (message) => {
    if (/Content Security Policy|CSP violation/i.test(message.text())) violations.push(message.text());
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await relay?.close();
});
beforeEach(async () => {
  await page?.setViewportSize({ width: 1280, height: 900 });
});

/** The text of a doc's content without its code: what a reader sees as prose. */
function proseOf(target: Page): Promise<string> {
  return target.locator('.doc-content').evaluate((content) => {
    const copy = content.cloneNode(true) as any;
    for (const code of copy.querySelectorAll('pre, code')) code.remove();
    return copy.textContent as string;
  });
}

describe('the docs site in Chromium', () => {
  it('lists the docs in reading order, Quickstart first, on the index and in the sidebar', async () => {
    await page.goto(`${relay.baseUrl}/docs/`);
    const sidebar = page.locator('#docs-nav ul a');
    expect(await sidebar.first().textContent()).toBe('Quickstart');
    expect(await sidebar.first().getAttribute('href')).toBe('/docs/quickstart');
    expect((await sidebar.allTextContents()).slice(0, 4)).toEqual(['Quickstart', 'Listen', 'CLI', 'API']);
    expect(await page.locator('#docs-nav .nav-group').allTextContents()).toEqual(expect.arrayContaining(['Get started', 'Guides', 'Reference', 'Operate']));
    // The index: the same order, each with its first sentence.
    const cards = page.locator('.doc-cards li');
    expect(await cards.first().locator('a').textContent()).toBe('Quickstart');
    expect(await cards.first().locator('p').textContent()).toMatch(/^This guide takes you/);

    await sidebar.first().click();
    await page.waitForURL(`${relay.baseUrl}/docs/quickstart`);
    expect(await page.locator('#docs-nav a[aria-current="page"]').textContent()).toBe('Quickstart');
    expect(await page.locator('.pager a[rel="next"] .pager-title').textContent()).toBe('Listen');
    expect(await page.locator('.doc-source a').getAttribute('href')).toBe('/docs/quickstart.md');
    expect(await page.locator('.docs-toc a').first().textContent()).toBe('1. Install and start');
    expect(violations).toEqual([]);
  });

  it('renders markdown: bold and code are markup, not the characters typed', async () => {
    await page.goto(`${relay.baseUrl}/docs/quickstart`);
    expect(await page.locator('.doc-content strong').count()).toBeGreaterThan(0);
    expect(await page.locator('.doc-content :not(pre) > code').count()).toBeGreaterThan(10);
    const prose = await proseOf(page);
    expect(prose).toContain('Line 1:');
    expect(prose).not.toContain('**');
    expect(prose).not.toContain('`');
    expect(prose).not.toMatch(/\]\([a-z-]+\.md/); // no [text](file.md) left as typed
    expect(violations).toEqual([]);
  });

  it('follows a link to another page to its heading', async () => {
    await page.goto(`${relay.baseUrl}/docs/listen`);
    const link = page.locator('.doc-content a[href^="/docs/"][href*="#"]').first();
    const href = (await link.getAttribute('href'))!;
    const [path, id] = href.split('#') as [string, string];
    expect(path).not.toBe('/docs/listen');
    await link.click();
    await page.waitForURL(`${relay.baseUrl}${href}`);
    const heading = page.locator(`[id="${id}"]`);
    expect(await heading.count()).toBe(1);
    // The heading is scrolled to: in the viewport, below the sticky header.
    await expect.poll(() => heading.evaluate((element) => Math.round(element.getBoundingClientRect().top))).toBeGreaterThanOrEqual(56);
    expect(await heading.evaluate((element) => element.getBoundingClientRect().top < (globalThis as any).innerHeight / 2)).toBe(true);
    expect(violations).toEqual([]);
  });

  it('gives each heading an anchor, shown on focus, that links to itself', async () => {
    await page.goto(`${relay.baseUrl}/docs/quickstart`);
    const headings = page.locator('.doc-content h2');
    expect(await headings.count()).toBeGreaterThan(3);
    for (const heading of await headings.all()) {
      const id = await heading.getAttribute('id');
      expect(id).toMatch(/^[a-z0-9-]+$/);
      expect(await heading.locator('a.heading-anchor').getAttribute('href')).toBe(`#${id}`);
    }
    const anchor = headings.nth(1).locator('a.heading-anchor');
    expect(await anchor.evaluate((element) => (globalThis as any).getComputedStyle(element).opacity)).toBe('0');
    await anchor.focus();
    expect(await anchor.evaluate((element) => (globalThis as any).getComputedStyle(element).opacity)).toBe('1');
    await anchor.click();
    expect(page.url()).toBe(`${relay.baseUrl}/docs/quickstart#${await headings.nth(1).getAttribute('id')}`);
  });

  it('highlights code on the server, and its Copy button copies it', async () => {
    await page.goto(`${relay.baseUrl}/docs/quickstart`);
    const block = page.locator('.doc-content .code-block', { has: page.locator('code.language-sh') }).first();
    expect(await block.locator('span[class^="hljs-"]').count()).toBeGreaterThan(0);
    const code = (await block.locator('code').textContent())!.replace(/\n$/, '');
    const button = block.locator('button.copy-button');
    expect(await button.textContent()).toBe('Copy');
    await button.click();
    await expect.poll(() => button.textContent()).toBe('Copied');
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(code);
    expect(violations).toEqual([]);
  });

  it('searches every page from the keyboard: / focuses the box, arrows choose, Enter opens', async () => {
    await page.goto(`${relay.baseUrl}/docs/errors`);
    await page.locator('h1').click(); // focus in the page, not in a field
    await page.keyboard.press('/');
    const box = page.locator('#docs-search');
    expect(await box.evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.type('hook listen');
    const options = page.locator('#docs-search-results [role="option"]');
    await options.first().waitFor();
    expect(await box.getAttribute('aria-expanded')).toBe('true');
    expect(await options.count()).toBeGreaterThan(2);
    expect(await box.getAttribute('aria-activedescendant')).toBe('docs-result-0');
    expect((await options.first().textContent())!.toLowerCase()).toContain('hook listen');
    await page.keyboard.press('ArrowDown');
    expect(await box.getAttribute('aria-activedescendant')).toBe('docs-result-1');
    await page.keyboard.press('ArrowUp');
    const href = (await options.first().locator('a').getAttribute('href'))!;
    await page.keyboard.press('Enter');
    await page.waitForURL(`${relay.baseUrl}${href}`);
    const [, id] = href.split('#');
    const target = id ? page.locator(`[id="${id}"]`) : page.locator('h1');
    expect((await target.textContent())!.toLowerCase()).toContain('hook listen');

    // A word in no doc says so, and a prefix finds whole words.
    await page.keyboard.press('/');
    await page.keyboard.type('xyzzyplugh');
    await expect.poll(() => page.locator('#docs-search-results .search-empty').textContent()).toContain('xyzzyplugh');
    await box.fill('');
    await box.pressSequentially('idempot');
    await expect.poll(() => options.count()).toBeGreaterThan(0);
    expect((await options.allTextContents()).join(' ').toLowerCase()).toContain('idempot');
    await page.keyboard.press('Escape');
    expect(await box.getAttribute('aria-expanded')).toBe('false');
    expect(violations).toEqual([]);
  });

  it('without script, the search box is a link to the index and the menu a link to the sidebar', async () => {
    const html = await (await fetch(`${relay.baseUrl}/docs/quickstart`)).text();
    expect(html).toContain('<a class="search-link" href="/docs/">Search the docs</a>');
    expect(html).toContain('<a class="nav-toggle button" href="#docs-nav"');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc="\/assets\/)/); // no inline script
    const index = await (await fetch(`${relay.baseUrl}/docs/search-index.json`)).json() as { pages: { name: string; sections: { id: string; heading: string; text: string }[] }[] };
    expect(index.pages[0]!.name).toBe('quickstart');
    expect(index.pages.find((doc) => doc.name === 'cli')!.sections.some((section) => section.id === 'hook-listen')).toBe(true);
  });

  it('at 375 px: no horizontal scroll, the sidebar behind the Menu button', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    for (const path of ['/', '/docs/', '/docs/quickstart', '/docs/cli', '/docs/api', '/docs/errors']) {
      await page.goto(`${relay.baseUrl}${path}`);
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth), path).toBeLessThanOrEqual(375);
    }
    await page.goto(`${relay.baseUrl}/docs/quickstart`);
    const nav = page.locator('#docs-nav');
    expect(await nav.isVisible()).toBe(false);
    const menu = page.locator('button.nav-toggle');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await menu.click();
    expect(await nav.isVisible()).toBe(true);
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await page.locator('#docs-nav a', { hasText: 'Delivery' }).click();
    await page.waitForURL(`${relay.baseUrl}/docs/delivery`);
    expect(await page.locator('#docs-nav').isVisible()).toBe(false);
    expect(violations).toEqual([]);
  });
});

describe('the landing page in Chromium', () => {
  it('says what Hook is, links the four entry points, copies the signup command, switches theme', async () => {
    await page.goto(`${relay.baseUrl}/`);
    expect(await page.locator('h1').textContent()).toBeTruthy();
    expect(await page.locator('.entry-card .entry-title').allTextContents()).toEqual(['Console', 'Playground', 'Docs', 'OpenAPI']);
    const curl = page.locator('.code-block', { hasText: 'curl -X POST' });
    expect(await curl.locator('code').textContent()).toBe(`curl -X POST ${relay.baseUrl}/v1/accounts`);
    await curl.locator('button.copy-button').click();
    await expect.poll(() => curl.locator('button.copy-button').textContent()).toBe('Copied');
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(`curl -X POST ${relay.baseUrl}/v1/accounts`);
    expect(await page.locator('.steps > li').count()).toBe(3);
    expect(await page.locator('.steps').textContent()).toContain('npx hook listen 3000');

    const toggle = page.locator('[data-theme-toggle]');
    await toggle.click();
    expect(await page.locator('html').getAttribute('data-theme')).toBe('light');
    await toggle.click();
    expect(await page.locator('html').getAttribute('data-theme')).toBe('dark');
    const background = await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor);
    expect(background).toBe('rgb(15, 17, 21)');
    await toggle.click(); // back to the system's setting for whatever runs next
    expect(violations).toEqual([]);
  });

  it('applies a stored theme before the body is parsed (no light flash on a dark choice), on every kind of page', async () => {
    // The theme <html> has when <body> is first inserted, before anything is painted
    // (a second browser context would crash the single-process Chromium: this page it is).
    await page.addInitScript(() => {
      const document = (globalThis as any).document;
      new (globalThis as any).MutationObserver((_records: unknown, observer: any) => {
        if (!document.body) return;
        (globalThis as any).themeAtBody = document.documentElement.dataset.theme ?? 'none';
        observer.disconnect();
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(`${relay.baseUrl}/`);
    await page.evaluate(() => (globalThis as any).localStorage.setItem('hook-theme', 'dark'));
    try {
      for (const path of ['/', '/docs/quickstart', '/console', '/playground']) {
        await page.goto(`${relay.baseUrl}${path}`);
        expect(await page.evaluate(() => (globalThis as any).themeAtBody), path).toBe('dark');
      }
    } finally {
      await page.evaluate(() => (globalThis as any).localStorage.removeItem('hook-theme'));
    }
  });
});
