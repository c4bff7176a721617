import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_BUNDLE_DIR, ensureConsoleBundle } from '../../console/bundle.ts';

const SOURCE_DIR = new URL('../../console/', import.meta.url);
const BUNDLE_DIR = new URL(`file://${CONSOLE_BUNDLE_DIR}/`);
/** The page and its assets; console.js and inspector.js come from the esbuild bundle (src/console/bundle.ts). */
const ASSETS = [
  { url: '/console', file: new URL('index.html', SOURCE_DIR), type: 'text/html; charset=utf-8' },
  { url: '/console/', file: new URL('index.html', SOURCE_DIR), type: 'text/html; charset=utf-8' },
  { url: '/console/assets/console.css', file: new URL('console.css', SOURCE_DIR), type: 'text/css; charset=utf-8' },
  { url: '/console/assets/console.js', file: new URL('console.js', BUNDLE_DIR), type: 'text/javascript; charset=utf-8' },
  { url: '/console/assets/inspector.js', file: new URL('inspector.js', BUNDLE_DIR), type: 'text/javascript; charset=utf-8' },
];
/**
 * Only the relay's own scripts, styles and connections (fetch and the WebSocket): no
 * inline script or style, so a payload that slipped into the page as markup could not run.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * `/console`: the web console's page and assets (see docs/console.md). The bundle is
 * built here when it is missing or older than its sources, so a fresh clone's
 * `npm start` serves it without a separate build step.
 */
export async function consolePages(app: FastifyInstance): Promise<void> {
  await ensureConsoleBundle();
  for (const asset of ASSETS) {
    const content = await readFile(asset.file);
    app.get(asset.url, { schema: { hide: true } }, (_request, reply) =>
      reply.type(asset.type)
        .header('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache')
        .send(content));
  }
}
