import { readdir, readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { publicBaseUrl } from '../endpoints/present.ts';

const PAGE_DIR = new URL('./', import.meta.url);
/** The repository's docs/ (read-only; a deployment without it shows an empty index). */
const DOCS_DIR = new URL('../../../../../docs/', import.meta.url);
/** Only the relay's own styles: no script at all, nothing else loaded. */
const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** A markdown file served raw: nothing in it may load or run, even if a browser rendered it. */
const RAW_CONTENT_SECURITY_POLICY = "default-src 'none'; sandbox; frame-ancestors 'none'";

/** Text made safe to place in HTML content or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function sendHtml(reply: FastifyReply, html: string): FastifyReply {
  return reply.type('text/html; charset=utf-8')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .send(html);
}

/** The names of docs/*.md, without `.md`, sorted; none when the directory is absent. */
async function docNames(): Promise<string[]> {
  try {
    return (await readdir(DOCS_DIR)).filter((file) => /^[a-z0-9-]+\.md$/.test(file)).map((file) => file.slice(0, -3)).sort();
  } catch {
    return [];
  }
}

/** The first `# ` heading of a markdown file, or its name. */
function titleOf(name: string, markdown: string): string {
  return /^# (.+)$/m.exec(markdown)?.[1]?.trim() ?? name;
}

function docPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} · Hook docs</title>
  <link rel="stylesheet" href="/landing.css">
</head>
<body>
  <main>
${body}
  </main>
</body>
</html>
`;
}

/**
 * `GET /`: what the relay is and where to go (console, playground, docs, OpenAPI); and
 * `/docs/`: the repository's docs/*.md, read-only, so the links work offline. Each doc is
 * served raw as `text/markdown` at `/docs/<name>.md` and, for reading in a browser, at
 * `/docs/<name>` as its markdown text escaped into a page (no renderer: nothing in a doc
 * can become markup).
 */
export async function landingRoutes(app: FastifyInstance, options: { publicUrl: string | undefined }): Promise<void> {
  const landing = await readFile(new URL('landing.html', PAGE_DIR), 'utf8');
  const stylesheet = await readFile(new URL('landing.css', PAGE_DIR));

  app.get('/', { schema: { hide: true } }, (request, reply) =>
    sendHtml(reply, landing.replaceAll('{{base_url}}', escapeHtml(publicBaseUrl(request, options.publicUrl)))));

  app.get('/landing.css', { schema: { hide: true } }, (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').send(stylesheet));

  app.get('/docs', { schema: { hide: true } }, (_request, reply) => reply.redirect('/docs/', 301));

  app.get('/docs/', { schema: { hide: true } }, async (_request, reply) => {
    const items = await Promise.all((await docNames()).map(async (name) => {
      const title = titleOf(name, await readFile(new URL(`${name}.md`, DOCS_DIR), 'utf8'));
      return `      <li><a href="/docs/${name}">${escapeHtml(title)}</a> <a class="quiet" href="/docs/${name}.md">${name}.md</a></li>`;
    }));
    return sendHtml(reply, docPage('Documentation', `    <h1>Documentation</h1>
    <p><a href="/">Hook relay</a> · <a href="/openapi.json">OpenAPI description</a></p>
    <ul class="links">
${items.join('\n') || '      <li class="quiet">No docs/ directory beside this relay.</li>'}
    </ul>`));
  });

  app.get('/docs/:file', {
    schema: { hide: true, params: Type.Object({ file: Type.String({ pattern: '^[a-z0-9-]+(\\.md)?$' }) }) },
  }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const name = file.replace(/\.md$/, '');
    if (!(await docNames()).includes(name)) return reply.callNotFound();
    const markdown = await readFile(new URL(`${name}.md`, DOCS_DIR), 'utf8');
    if (file.endsWith('.md')) {
      return reply.type('text/markdown; charset=utf-8')
        .header('content-security-policy', RAW_CONTENT_SECURITY_POLICY)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-cache')
        .send(markdown);
    }
    return sendHtml(reply, docPage(titleOf(name, markdown), `    <p><a href="/docs/">All docs</a> · <a href="/docs/${name}.md">${name}.md (raw)</a></p>
    <pre class="doc">${escapeHtml(markdown)}</pre>`));
  });
}
