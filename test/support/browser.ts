/**
 * The browser for tests: the headless Chromium that the npm package @sparticuz/chromium
 * ships inside itself (brotli archives, no download at install), driven by
 * playwright-core. Nothing on the machine is required; HOOK_TEST_CHROMIUM may name
 * another Chromium (a system one, say) to use instead.
 *
 * The package extracts into os.tmpdir(), shared by every project and version on the
 * machine and written in place (a second test run could start a half-written binary).
 * Here it extracts into a directory of its own per package version under
 * node_modules/.cache, built beside it and renamed into place, so it happens once per
 * install and a run never sees a partial browser.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';
import { afterEach, beforeAll, beforeEach, expect } from 'vitest';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const CACHE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'hook-test-chromium');

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  const manifest = join(dirname(dirname(require.resolve('@sparticuz/chromium'))), 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * fontconfig settings that add the package's fonts to the system's (if any), so a page
 * renders readable text on a machine with no fonts installed. The package's own
 * fonts.conf names /tmp/fonts only.
 */
function fontsConfig(dir: string): string {
  return [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
    '<fontconfig>',
    '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>',
    `  <dir>${join(dir, 'fonts')}</dir>`,
    `  <cachedir>${join(dir, 'fonts-cache')}</cachedir>`,
    '</fontconfig>',
    '',
  ].join('\n');
}

/** The directory holding `chromium`, its graphics libraries and fonts, extracted once per package version. */
async function extractedBrowser(): Promise<string> {
  const dir = join(CACHE_DIR, packageVersion());
  if (existsSync(join(dir, 'fonts.conf'))) return dir;
  mkdirSync(CACHE_DIR, { recursive: true });
  const staging = mkdtempSync(join(CACHE_DIR, 'partial-'));
  const savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = staging; // the package extracts into os.tmpdir(), read at each call
  try {
    await chromium.executablePath();
  } finally {
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
  }
  writeFileSync(join(staging, 'fonts.conf'), fontsConfig(dir));
  try {
    renameSync(staging, dir);
  } catch (error) {
    // Another test run finished extracting first: use its copy.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(dir, 'fonts.conf'))) throw error;
  }
  return dir;
}

/**
 * Starts headless Chromium; if it cannot, fails with one line that says why and what to do.
 * `extraArgs` go after the usual flags (`--remote-debugging-port=<port>` for Lighthouse, say).
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  const override = process.env.HOOK_TEST_CHROMIUM;
  let executablePath = override;
  try {
    const env: Record<string, string> = {};
    if (!executablePath) {
      const dir = await extractedBrowser();
      executablePath = join(dir, 'chromium');
      env.FONTCONFIG_FILE = join(dir, 'fonts.conf');
    }
    return await playwright.launch({
      executablePath,
      // The package's flags (no sandbox, no zygote, software GL) are what its build needs to run as root and without a GPU.
      args: [...(override ? ['--no-sandbox'] : chromium.args), ...extraArgs],
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    const fix = override
      ? `check HOOK_TEST_CHROMIUM (${override}), or unset it to use the Chromium from @sparticuz/chromium`
      : `run "npm install" again (it brings @sparticuz/chromium), or set HOOK_TEST_CHROMIUM to a Chromium to use instead`;
    throw new Error(`Cannot start the test browser (${executablePath ?? '@sparticuz/chromium'}): ${reason}. Fix: ${fix}.`);
  }
}

/** Hands pages to browserSuite, whose uncaught script errors then fail the test that caused them. */
export interface BrowserSuite {
  watch(page: Page): void;
}

/**
 * The hooks every browser test file shares: `launch` (the browser and its pages) runs
 * before the tests, after the file's own beforeAll; if it throws, each test fails with
 * that error (a failed beforeAll would only mark them skipped). Uncaught errors in the
 * pages it watches fail the test that caused them.
 */
export function browserSuite(launch: (suite: BrowserSuite) => Promise<void>, timeoutMs?: number): BrowserSuite {
  const pageErrors: Error[] = [];
  let launchError: unknown;
  const suite: BrowserSuite = { watch: (page) => void page.on('pageerror', (error) => pageErrors.push(error)) };
  beforeAll(async () => {
    try {
      await launch(suite);
    } catch (error) {
      launchError = error;
    }
  }, timeoutMs);
  beforeEach(() => {
    if (launchError) throw launchError;
  });
  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });
  return suite;
}
