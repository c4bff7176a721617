import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile } from 'node:fs/promises';
import { startTestRelay, type TestRelay } from '../../../test/support/relay.ts';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay.close());

const DOCS = new URL('../../../docs/', import.meta.url);

describe('landing page and docs', () => {
  it('GET / is an HTML page under a strict CSP (no script at all) linking the console, the playground, the docs and /openapi.json', async () => {
    const response = await fetch(`${relay.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect(csp).not.toContain('unsafe-inline');
    const html = await response.text();
    for (const href of ['/console', '/playground', '/docs/', '/openapi.json']) expect(html).toContain(`href="${href}"`);
    expect(html).not.toMatch(/<script|style=|<style/i);
    expect(html).toContain(`curl -X POST ${relay.baseUrl}/v1/accounts`);
    const stylesheet = await fetch(`${relay.baseUrl}/landing.css`);
    expect(stylesheet.headers.get('content-type')).toBe('text/css; charset=utf-8');
    // Every link on the page answers.
    for (const href of ['/console', '/playground', '/docs/', '/openapi.json']) expect((await fetch(`${relay.baseUrl}${href}`)).status, href).toBe(200);
  });

  it('escapes a hostile Host header in the page', async () => {
    const { request } = await import('node:http');
    const html = await new Promise<string>((resolve, reject) => {
      const url = new URL(relay.baseUrl);
      request({ host: url.hostname, port: url.port, path: '/', headers: { host: 'x"><img src=x onerror=alert(1)>' } }, (response) => {
        let text = '';
        response.on('data', (chunk) => { text += chunk; });
        response.on('end', () => resolve(text));
      }).on('error', reject).end();
    });
    expect(html).not.toContain('<img');
  });

  it('serves every docs/*.md: an index, each as text/markdown and as an escaped page; nothing else', async () => {
    const files = (await readdir(DOCS)).filter((file) => file.endsWith('.md')).sort();
    expect(files).toContain('console.md');
    const index = await fetch(`${relay.baseUrl}/docs/`);
    expect(index.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await index.text();
    for (const file of files) {
      expect(html).toContain(`href="/docs/${file}"`);
      const raw = await fetch(`${relay.baseUrl}/docs/${file}`);
      expect(raw.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(await raw.text()).toBe(await readFile(new URL(file, DOCS), 'utf8'));
    }
    const page = await fetch(`${relay.baseUrl}/docs/errors`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const text = await page.text();
    expect(text).toContain('<pre class="doc">');
    expect(text).toContain('`console_session_invalid`');
    const body = text.split('<pre class="doc">')[1]!.split('</pre>')[0]!;
    expect(body).toContain('Bearer &#60;api key&#62;'); // the markdown's own < are escaped
    expect(body).not.toContain('<');
    expect((await fetch(`${relay.baseUrl}/docs/nope.md`)).status).toBe(404);
    for (const path of ['/docs/..%2Fpackage.json', '/docs/%2E%2E%2FREADME.md', '/docs/../package.json']) expect([400, 404], path).toContain((await fetch(`${relay.baseUrl}${path}`)).status);
  });
});
