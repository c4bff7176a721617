/**
 * The web console in a real browser (support/browser.ts): the screenshots each flow
 * keeps in test/artifacts/ (not committed: .gitignore) and the checks every page shares.
 */
import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';

const ARTIFACTS = new URL('../artifacts/', import.meta.url);

/** Saves a full-page screenshot as test/artifacts/<name>.png and returns its size in bytes. */
export async function saveScreenshot(page: Page, name: string): Promise<number> {
  await mkdir(ARTIFACTS, { recursive: true });
  const image = await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname, fullPage: true });
  return image.length;
}

/** Whether the page scrolls sideways (content wider than the viewport). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => { const root = (globalThis as any).document.documentElement; return root.scrollWidth > root.clientWidth; });
}

/** Opens the console at `baseUrl` and signs in with `key` (the form a person uses); resolves once the page is signed in. */
export async function signInToConsole(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console`);
  await page.fill('#api-key', key);
  await page.press('#api-key', 'Enter');
  await page.waitForSelector('#sign-out');
}
