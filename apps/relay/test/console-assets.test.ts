// The console's and the site's assets: compressed (brotli, else gzip) for a browser that
// accepts it, the same bytes once decompressed, sent as they are to one that does not,
// and each form under the same headers (the console's CSP on every one).
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '@hook/test/relay';
import { CONSOLE_BUNDLE_DIR } from '../src/console/bundle.ts';
import { chosenEncoding } from '../src/routes/site-assets.ts';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../src/routes/console/pages.ts';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay.close());

const SOURCE = new URL('../src/', import.meta.url);

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** A GET over node:http, which (unlike fetch) neither asks for nor undoes a content-encoding. */
function get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(`${relay.baseUrl}${path}`, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject).end();
  });
}

const CONSOLE_ASSETS = [
  { path: '/console', file: new URL('console/index.html', SOURCE).pathname, type: 'text/html; charset=utf-8' },
  { path: '/console/assets/console.css', file: new URL('console/console.css', SOURCE).pathname, type: 'text/css; charset=utf-8' },
  { path: '/console/assets/console.js', file: join(CONSOLE_BUNDLE_DIR, 'console.js'), type: 'text/javascript; charset=utf-8' },
  { path: '/console/assets/inspector.js', file: join(CONSOLE_BUNDLE_DIR, 'inspector.js'), type: 'text/javascript; charset=utf-8' },
];
const SITE_ASSETS = [
  { path: '/assets/tokens.css', file: new URL('site/tokens.css', SOURCE).pathname, type: 'text/css; charset=utf-8' },
  { path: '/assets/inspector.css', file: new URL('site/inspector.css', SOURCE).pathname, type: 'text/css; charset=utf-8' },
  { path: '/assets/theme.js', file: new URL('site/theme.js', SOURCE).pathname, type: 'text/javascript; charset=utf-8' },
  { path: '/assets/docs.css', file: new URL('site/docs.css', SOURCE).pathname, type: 'text/css; charset=utf-8' },
  { path: '/assets/docs.js', file: new URL('site/docs.js', SOURCE).pathname, type: 'text/javascript; charset=utf-8' },
];

describe('compressed assets', () => {
  it.each([...CONSOLE_ASSETS, ...SITE_ASSETS])('$path: brotli, else gzip, else as it is; the same bytes each way', async ({ path, file, type }) => {
    const original = readFileSync(file);
    const plain = await get(path);
    const brotli = await get(path, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    const gzipped = await get(path, { 'accept-encoding': 'gzip, deflate' });
    const brRefused = await get(path, { 'accept-encoding': 'br;q=0, gzip;q=0.8' });
    const identityOnly = await get(path, { 'accept-encoding': 'identity' });
    for (const answer of [plain, brotli, gzipped, brRefused, identityOnly]) {
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe(type);
      expect(answer.headers.vary).toBe('accept-encoding');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['content-length']).toBe(String(answer.body.length));
      if (path.startsWith('/console')) expect(answer.headers['content-security-policy']).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    }
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(original)).toBe(true);
    expect(identityOnly.headers['content-encoding']).toBeUndefined();
    expect(identityOnly.body.equals(original)).toBe(true);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.body).equals(original)).toBe(true);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.body).equals(original)).toBe(true);
    expect(brRefused.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(brRefused.body).equals(original)).toBe(true);
  });

  it('sends the console\'s script at under a third of its size, and brotli smaller than gzip', async () => {
    const plain = await get('/console/assets/console.js');
    const brotli = await get('/console/assets/console.js', { 'accept-encoding': 'br' });
    const gzipped = await get('/console/assets/console.js', { 'accept-encoding': 'gzip' });
    expect(plain.body.length).toBeGreaterThan(50_000);
    expect(brotli.body.length).toBeLessThan(plain.body.length / 3);
    expect(brotli.body.length).toBeLessThan(gzipped.body.length);
  });

  it('answers HEAD with the headers of the form GET would send', async () => {
    const head = await new Promise<Answer>((resolve, reject) => {
      request(`${relay.baseUrl}/console/assets/console.css`, { method: 'HEAD', headers: { 'accept-encoding': 'br' } }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.alloc(0) }));
      }).on('error', reject).end();
    });
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBe('br');
    expect(head.headers.vary).toBe('accept-encoding');
    expect(head.headers['content-security-policy']).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  });
});

describe('chosenEncoding', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['deflate', undefined],
    ['gzip', 'gzip'],
    ['GZIP;q=0.5', 'gzip'],
    ['gzip, br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0.0, gzip;q=0', undefined],
    ['gzip;q=0', undefined],
    ['br ; q=1', 'br'],
  ] as const)('%j gives %j', (header, expected) => {
    expect(chosenEncoding(header)).toBe(expected);
  });
});
