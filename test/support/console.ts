/**
 * The web console in a real browser (support/browser.ts) against a real relay: an
 * account with endpoints, a page signed in through POST /console/session, and the
 * screenshots each flow keeps in test/artifacts/ (not committed: .gitignore).
 */
import { mkdir } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';

const ARTIFACTS = new URL('../artifacts/', import.meta.url);

/** Saves a full-page screenshot as test/artifacts/<name>.png and returns its size in bytes. */
export async function saveScreenshot(page: Page, name: string): Promise<number> {
  await mkdir(ARTIFACTS, { recursive: true });
  const image = await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname, fullPage: true });
  return image.length;
}

/** Signs a browser context in with an API key, as the sign-in form does (the cookie lands in the context). */
export async function signInContext(context: BrowserContext, baseUrl: string, apiKey: string): Promise<void> {
  const response = await context.request.post(`${baseUrl}/console/session`, { data: { api_key: apiKey }, headers: { 'x-hook-console': '1' } });
  if (response.status() !== 204) throw new Error(`console sign-in answered ${response.status()}: ${await response.text()}`);
}

/** Whether the page scrolls sideways (content wider than the viewport). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
}
