import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { COMPRESSED_FORMS, CONSOLE_BUNDLE_DIR, ensureConsoleBundle } from '../../console/bundle.ts';
import { compressedInMemory, sendAsset, type AssetBody } from '../site-assets.ts';

const SOURCE_DIR = new URL('../../console/', import.meta.url);
const BUNDLE_DIR = new URL(`file://${CONSOLE_BUNDLE_DIR}/`);
/**
 * The page and its assets. console.js and inspector.js come from the esbuild bundle
 * (src/console/bundle.ts), and so does console.css (a copy): each with its brotli and
 * gzip forms, made when the bundle was built. The page itself (~1 KB) is compressed here.
 */
const ASSETS = [
  { url: '/console', file: new URL('index.html', SOURCE_DIR), type: 'text/html; charset=utf-8', bundled: false },
  { url: '/console/', file: new URL('index.html', SOURCE_DIR), type: 'text/html; charset=utf-8', bundled: false },
  { url: '/console/assets/console.css', file: new URL('console.css', BUNDLE_DIR), type: 'text/css; charset=utf-8', bundled: true },
  { url: '/console/assets/console.js', file: new URL('console.js', BUNDLE_DIR), type: 'text/javascript; charset=utf-8', bundled: true },
  { url: '/console/assets/inspector.js', file: new URL('inspector.js', BUNDLE_DIR), type: 'text/javascript; charset=utf-8', bundled: true },
];
/**
 * Only the relay's own scripts, styles and connections (fetch and the WebSocket): no
 * inline script or style, so a payload that slipped into the page as markup could not run.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** A bundled file and the compressed forms the build wrote beside it, all read at start. */
async function bundledAsset(file: URL): Promise<AssetBody> {
  const [identity, ...forms] = await Promise.all([file, ...COMPRESSED_FORMS.map((form) => new URL(`${file.href}${form.suffix}`))].map((url) => readFile(url)));
  const encoded = Object.fromEntries(COMPRESSED_FORMS.map((form, i) => [form.encoding, () => Promise.resolve(forms[i]!)])) as AssetBody['encoded'];
  return { identity: identity!, encoded };
}

/**
 * `/console`: the web console's page and assets (see docs/console.md). The bundle is
 * built here when it is missing or older than its sources, so a fresh clone's
 * `npm start` serves it without a separate build step.
 */
export async function consolePages(app: FastifyInstance): Promise<void> {
  await ensureConsoleBundle();
  for (const asset of ASSETS) {
    const body = asset.bundled ? await bundledAsset(asset.file) : compressedInMemory(await readFile(asset.file));
    app.get(asset.url, { schema: { hide: true } }, (request, reply) =>
      sendAsset(request, reply.type(asset.type)
        .header('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache'), body));
  }
}
