import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { docPage, indexPage, sendHtml, type DocLink } from './pages.ts';
import { createDocSite, type DocSite } from './site.ts';

/** The repository's docs/ (read-only; a deployment without it shows an empty index). */
const DOCS_DIR = new URL('../../../../../docs/', import.meta.url);
/** A markdown file served raw: nothing in it may load or run, even if a browser rendered it. */
const RAW_CONTENT_SECURITY_POLICY = "default-src 'none'; sandbox; frame-ancestors 'none'";

/**
 * The docs as links. A page's sidebar needs only names, so it renders no other doc (the
 * first page opened answers as fast as any); the index shows each doc's first sentence.
 */
async function docLinks(site: DocSite, withDescriptions: boolean): Promise<DocLink[]> {
  return Promise.all((await site.entries()).map(async (entry) => {
    if (entry.label && !withDescriptions) return { entry, title: entry.label, description: '' };
    const doc = (await site.render(entry.name))!;
    return { entry, title: doc.title, description: doc.description };
  }));
}

/**
 * `/docs/`: the repository's docs/*.md as a site, so the links work offline. Each doc is
 * a page at `/docs/<name>` (rendered markdown, see render.ts) and its source, served raw
 * as `text/markdown`, at `/docs/<name>.md`; `/docs/search-index.json` is what docs.js
 * searches in the browser.
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  const site = createDocSite(DOCS_DIR);
  /** The search index is every doc's text (~600 KB); compressed once, it is a fifth of that. */
  let gzippedSearchIndex: Promise<Buffer> | undefined;

  app.get('/docs', { schema: { hide: true } }, (_request, reply) => reply.redirect('/docs/', 301));

  app.get('/docs/', { schema: { hide: true } }, async (_request, reply) => sendHtml(reply, indexPage(await docLinks(site, true))));

  app.get('/docs/search-index.json', { schema: { hide: true } }, async (request, reply) => {
    reply.type('application/json; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .header('vary', 'accept-encoding');
    if (!/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) return reply.send(await site.searchIndex());
    gzippedSearchIndex ??= site.searchIndex().then((json) => promisify(gzip)(json));
    return reply.header('content-encoding', 'gzip').send(await gzippedSearchIndex);
  });

  app.get('/docs/:file', {
    schema: { hide: true, params: Type.Object({ file: Type.String({ pattern: '^[a-z0-9-]+(\\.md)?$' }) }) },
  }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const name = file.replace(/\.md$/, '');
    if (file.endsWith('.md')) {
      const markdown = await site.markdown(name);
      if (markdown === undefined) return reply.callNotFound();
      return reply.type('text/markdown; charset=utf-8')
        .header('content-security-policy', RAW_CONTENT_SECURITY_POLICY)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-cache')
        .send(markdown);
    }
    const doc = await site.render(name);
    if (!doc) return reply.callNotFound();
    return sendHtml(reply, docPage(name, doc, await docLinks(site, false)));
  });
}
