import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile } from 'node:fs/promises';
import { startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay.close());

const DOCS = new URL('../../../docs/', import.meta.url);

describe('landing page and docs', () => {
  it('GET / is an HTML page under a strict CSP (the relay\'s own script files only) linking the console, the playground, the docs and /openapi.json', async () => {
    const response = await fetch(`${relay.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain('unsafe-');
    const html = await response.text();
    for (const href of ['/console', '/playground', '/docs/', '/openapi.json']) expect(html).toContain(`href="${href}"`);
    // Scripts are files (the theme switch, the copy buttons), never inline; no inline style.
    expect([...html.matchAll(/<script[^>]*>/gi)].map(([tag]) => tag)).toEqual(['<script src="/assets/theme.js">', '<script type="module" src="/assets/docs.js">']);
    expect(html).not.toMatch(/style=|<style|\son[a-z]+=/i);
    expect(html).toContain(`curl -X POST ${relay.baseUrl}/v1/accounts`);
    expect(html).toContain('data-theme-toggle');
    for (const asset of ['/landing.css', '/assets/tokens.css', '/assets/docs.css']) {
      expect((await fetch(`${relay.baseUrl}${asset}`)).headers.get('content-type'), asset).toBe('text/css; charset=utf-8');
    }
    // Every link on the page answers.
    for (const href of ['/console', '/playground', '/docs/', '/openapi.json']) expect((await fetch(`${relay.baseUrl}${href}`)).status, href).toBe(200);
  });

  it('serves the docs\' search index, gzipped for a client that takes it', async () => {
    const { request } = await import('node:http');
    const { gunzipSync } = await import('node:zlib');
    const get = (headers: Record<string, string>) => new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      request(`${relay.baseUrl}/docs/search-index.json`, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ encoding: response.headers['content-encoding'], body: Buffer.concat(chunks) }));
      }).on('error', reject).end();
    });
    const plain = await get({});
    expect(plain.encoding).toBeUndefined();
    const index = JSON.parse(plain.body.toString('utf8')) as { pages: { name: string; title: string }[] };
    expect(index.pages[0]).toMatchObject({ name: 'quickstart', title: 'Quickstart' });
    const zipped = await get({ 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.encoding).toBe('gzip');
    expect(zipped.body.length).toBeLessThan(plain.body.length / 3);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
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

  it('serves every docs/*.md: an index, each as text/markdown and as a rendered page; nothing else', async () => {
    const files = (await readdir(DOCS)).filter((file) => file.endsWith('.md')).sort();
    expect(files).toContain('console.md');
    const index = await fetch(`${relay.baseUrl}/docs/`);
    expect(index.headers.get('content-security-policy')).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    const html = await index.text();
    for (const file of files) {
      expect(html).toContain(`href="/docs/${file.slice(0, -3)}"`);
      const raw = await fetch(`${relay.baseUrl}/docs/${file}`);
      expect(raw.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(raw.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox; frame-ancestors 'none'");
      expect(await raw.text()).toBe(await readFile(new URL(file, DOCS), 'utf8'));
    }
    const page = await fetch(`${relay.baseUrl}/docs/errors`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const text = await page.text();
    expect(text).toContain('href="/docs/errors.md"');
    const body = text.split('<article class="doc-content">')[1]!.split('</article>')[0]!;
    expect(body).toContain('<td><code>console_session_invalid</code></td>'); // markdown rendered: a table, code
    expect(body).toContain('Bearer &lt;api key&gt;'); // the markdown's own < are escaped, not markup
    expect(body).not.toMatch(/<(?!\/?(h[1-6]|p|a|ul|ol|li|pre|code|span|em|strong|table|thead|tbody|tr|th|td|div|br|hr|blockquote)[\s>])/);
    expect((await fetch(`${relay.baseUrl}/docs/nope.md`)).status).toBe(404);
    for (const path of ['/docs/..%2Fpackage.json', '/docs/%2E%2E%2FREADME.md', '/docs/../package.json']) expect([400, 404], path).toContain((await fetch(`${relay.baseUrl}${path}`)).status);
  });
});
