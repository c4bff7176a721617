import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { publicBaseUrl } from '../endpoints/present.ts';
import { docsRoutes } from '../docs/index.ts';
import { escapeHtml, pageShell, sendHtml, siteHeader } from '../docs/pages.ts';

const PAGE_DIR = new URL('./', import.meta.url);

/**
 * `GET /`: what the relay is and where to go (console, playground, docs, OpenAPI), in the
 * docs' design and header; and the docs site under `/docs/` (../docs/).
 */
export async function landingRoutes(app: FastifyInstance, options: { publicUrl: string | undefined }): Promise<void> {
  const main = await readFile(new URL('landing.html', PAGE_DIR), 'utf8');
  const stylesheet = await readFile(new URL('landing.css', PAGE_DIR));
  const page = pageShell({
    title: 'Hook relay',
    description: 'A webhook relay: receiving URLs that store every event byte for byte, deliver it signed, retry and replay.',
    stylesheets: ['/assets/docs.css', '/landing.css'],
    bodyClass: 'landing',
    header: siteHeader({ docs: false }),
    body: main,
  });

  // The base URL comes from the request's Host when no public URL is configured: escaped, it is only text.
  app.get('/', { schema: { hide: true } }, (request, reply) =>
    sendHtml(reply, page.replaceAll('{{base_url}}', escapeHtml(publicBaseUrl(request, options.publicUrl)))));

  app.get('/landing.css', { schema: { hide: true } }, (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').send(stylesheet));

  await app.register(docsRoutes);
}
