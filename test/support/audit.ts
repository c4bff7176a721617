/**
 * Accessibility audits and screenshots of the relay's pages in the real browser
 * (support/browser.ts), for test/e2e/site-audit.test.ts: axe-core's serious and critical
 * violations in a light or dark colour scheme, and full-page screenshots named
 * test/artifacts/<page>-<width>-<theme>.png (not committed: .gitignore).
 *
 * axe-core is evaluated over the DevTools protocol (page.evaluate of its source), which
 * the pages' strict CSP (script-src 'self') does not apply to, so the audit needs no
 * `bypassCSP` context: with the CSP bypassed, markup the CSP blocks for users (an inline
 * style, say) would be applied and audited as if it worked.
 */
import { mkdir } from 'node:fs/promises';
import axe from 'axe-core';
import type { Page } from 'playwright-core';

export type Theme = 'light' | 'dark';

const ARTIFACTS = new URL('../artifacts/', import.meta.url);
/** The rules axe runs: WCAG 2.x A and AA, and its best practices (landmarks, one h1, …). */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

export interface Violation {
  /** axe's rule id: color-contrast, label, … */
  rule: string;
  impact: 'serious' | 'critical';
  help: string;
  helpUrl: string;
  /** Each offending element: its CSS selector path and axe's summary of what to fix. */
  nodes: { target: string; html: string; summary: string }[];
}

/** Sets the page's `prefers-color-scheme` (the pages follow it without a stored choice: /assets/theme.js). */
export async function useTheme(page: Page, theme: Theme): Promise<void> {
  await page.emulateMedia({ colorScheme: theme });
}

/** Runs axe-core on the page as it is now; returns its serious and critical violations. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => typeof (globalThis as any).axe === 'object'))) await page.evaluate(axe.source);
  const results = await page.evaluate(async (tags) => {
    const found = await (globalThis as any).axe.run((globalThis as any).document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return found.violations as { id: string; impact: string | null; help: string; helpUrl: string; nodes: { target: unknown[]; html: string; failureSummary?: string }[] }[];
  }, AXE_TAGS);
  return results
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      rule: violation.id,
      impact: violation.impact as Violation['impact'],
      help: violation.help,
      helpUrl: violation.helpUrl,
      nodes: violation.nodes.map((node) => ({
        target: node.target.map((part) => (Array.isArray(part) ? part.join(' >>> ') : String(part))).join(' '),
        html: node.html.length > 160 ? `${node.html.slice(0, 160)}…` : node.html,
        summary: (node.failureSummary ?? '').replace(/\s+/g, ' ').trim(),
      })),
    }));
}

/** The violations as lines for an assertion message: rule, impact and help, then each element with what to fix. */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((violation) => [
    `${violation.rule} (${violation.impact}): ${violation.help} <${violation.helpUrl}>`,
    ...violation.nodes.map((node) => `  ${node.target}\n    ${node.html}\n    ${node.summary}`),
  ].join('\n')).join('\n');
}

/** The artifact name of a page's screenshot: `<page>-<width>-<theme>`. */
export function screenshotName(pageName: string, width: number, theme: Theme): string {
  return `${pageName}-${width}-${theme}`;
}

/** Saves a full-page screenshot as test/artifacts/<page>-<width>-<theme>.png; returns its path and size in bytes. */
export async function saveAuditScreenshot(page: Page, pageName: string, width: number, theme: Theme): Promise<{ path: string; bytes: number }> {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = new URL(`${screenshotName(pageName, width, theme)}.png`, ARTIFACTS).pathname;
  const image = await page.screenshot({ path, fullPage: true });
  return { path, bytes: image.length };
}
