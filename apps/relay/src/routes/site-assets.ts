import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';

const SITE_DIR = new URL('../site/', import.meta.url);
/** The design shared by every page (src/site/): tokens and the theme switch. */
const ASSETS = [
  { url: '/assets/tokens.css', file: 'tokens.css', type: 'text/css; charset=utf-8' },
  { url: '/assets/theme.js', file: 'theme.js', type: 'text/javascript; charset=utf-8' },
  // The docs site and the landing page: layout, search, copy buttons.
  { url: '/assets/docs.css', file: 'docs.css', type: 'text/css; charset=utf-8' },
  { url: '/assets/docs.js', file: 'docs.js', type: 'text/javascript; charset=utf-8' },
];

/** `/assets/*`: the shared design's files, read once at start. */
export async function siteAssets(app: FastifyInstance): Promise<void> {
  for (const asset of ASSETS) {
    const content = await readFile(new URL(asset.file, SITE_DIR));
    app.get(asset.url, { schema: { hide: true } }, (_request, reply) =>
      reply.type(asset.type)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-cache')
        .send(content));
  }
}
