/**
 * The HTML around the docs and the landing page: one header (brand, docs, search, theme),
 * the docs' sidebar, table of contents and previous/next links. Everything placed in it
 * from a doc is either the renderer's sanitized HTML or escaped here.
 */
import type { FastifyReply } from 'fastify';
import type { DocHeading, RenderedDoc } from './render.ts';
import type { DocEntry } from './site.ts';

/**
 * The relay's own scripts and styles only (theme.js, docs.js, tokens.css…): nothing
 * inline, nothing from elsewhere; connect-src for docs.js's fetch of the search index.
 */
export const PAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Text made safe to place in HTML content or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

export function sendHtml(reply: FastifyReply, html: string): FastifyReply {
  return reply.type('text/html; charset=utf-8')
    .header('content-security-policy', PAGE_CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .send(html);
}

/** A doc as the sidebar, index and pager show it. */
export interface DocLink {
  entry: DocEntry;
  title: string;
  description: string;
}

function labelOf(link: DocLink): string {
  return link.entry.label ?? link.title;
}

/** The document around a page's body; `stylesheets` after tokens.css, scripts as modules (deferred, no inline code). */
export function pageShell(options: { title: string; description: string; stylesheets: string[]; bodyClass: string; header: string; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(options.title)}</title>
  <meta name="description" content="${escapeHtml(options.description)}">
  <link rel="stylesheet" href="/assets/tokens.css">
${options.stylesheets.map((href) => `  <link rel="stylesheet" href="${href}">`).join('\n')}
  <script src="/assets/theme.js"></script>
  <script type="module" src="/assets/docs.js"></script>
</head>
<body class="${options.bodyClass}">
  <a class="skip-link" href="#main">Skip to content</a>
${options.header}
${options.body}
</body>
</html>
`;
}

/** The bar on every page. `docs`: with the sidebar's menu button and the search box (a link to the index until docs.js makes it one). */
export function siteHeader(options: { docs: boolean }): string {
  return `  <header class="site-header">
    <a class="brand" href="/"><span class="brand-mark" aria-hidden="true">↪</span> Hook</a>
    <a class="site-section" href="/docs/">Docs</a>
${options.docs ? `    <a class="nav-toggle button" href="#docs-nav" aria-controls="docs-nav">Menu</a>
    <div class="search" data-search>
      <a class="search-link" href="/docs/">Search the docs</a>
    </div>
` : `    <span class="header-space"></span>
    <a class="header-link" href="/console">Console</a>
`}    <button type="button" class="theme-toggle" data-theme-toggle>Theme: system</button>
  </header>`;
}

function sidebar(links: DocLink[], current: string | undefined): string {
  const groups = new Map<string, DocLink[]>();
  for (const link of links) groups.set(link.entry.group, [...groups.get(link.entry.group) ?? [], link]);
  const sections = [...groups].map(([group, members], index) => `      <p class="nav-group" id="nav-group-${index}">${escapeHtml(group)}</p>
      <ul aria-labelledby="nav-group-${index}">
${members.map((link) => `        <li><a href="/docs/${link.entry.name}"${link.entry.name === current ? ' aria-current="page"' : ''}>${escapeHtml(labelOf(link))}</a></li>`).join('\n')}
      </ul>`);
  return `    <nav id="docs-nav" class="docs-nav" aria-label="Documentation">
      <a class="nav-home" href="/docs/"${current === undefined ? ' aria-current="page"' : ''}>All docs</a>
${sections.join('\n')}
    </nav>`;
}

function tableOfContents(headings: DocHeading[]): string {
  const h2s = headings.filter((heading) => heading.level === 2);
  if (h2s.length === 0) return '';
  return `    <nav class="docs-toc" aria-labelledby="toc-title">
      <p class="toc-title" id="toc-title">On this page</p>
      <ul>
${h2s.map((heading) => `        <li><a href="#${escapeHtml(heading.id)}">${escapeHtml(heading.text)}</a></li>`).join('\n')}
      </ul>
    </nav>`;
}

function pager(previous: DocLink | undefined, next: DocLink | undefined): string {
  const link = (doc: DocLink | undefined, rel: 'prev' | 'next') => doc
    ? `<a class="pager-${rel}" rel="${rel}" href="/docs/${doc.entry.name}"><span class="pager-label">${rel === 'prev' ? '← Previous' : 'Next →'}</span> <span class="pager-title">${escapeHtml(labelOf(doc))}</span></a>`
    : '<span></span>';
  return `      <nav class="pager" aria-label="Previous and next page">
        ${link(previous, 'prev')}
        ${link(next, 'next')}
      </nav>`;
}

/** `/docs/<name>`: sidebar, the page, its h2s on wide screens, previous/next, the raw markdown. */
export function docPage(name: string, doc: RenderedDoc, links: DocLink[]): string {
  const index = links.findIndex((link) => link.entry.name === name);
  return pageShell({
    title: `${doc.title} · Hook docs`,
    description: doc.description,
    stylesheets: ['/assets/docs.css'],
    bodyClass: 'docs',
    header: siteHeader({ docs: true }),
    body: `  <div class="docs-layout">
${sidebar(links, name)}
    <main id="main" class="docs-main">
      <article class="doc-content">
${doc.html}
      </article>
${pager(links[index - 1], links[index + 1])}
      <p class="doc-source"><a href="/docs/${name}.md">${name}.md</a> <span class="muted">is this page's markdown, as served from the relay's docs/ directory.</span></p>
    </main>
${tableOfContents(doc.headings)}
  </div>`,
  });
}

/** `/docs/`: every page in reading order, with its first sentence. */
export function indexPage(links: DocLink[]): string {
  const groups = new Map<string, DocLink[]>();
  for (const link of links) groups.set(link.entry.group, [...groups.get(link.entry.group) ?? [], link]);
  const sections = [...groups].map(([group, members]) => `        <h2>${escapeHtml(group)}</h2>
        <ul class="doc-cards">
${members.map((link) => `          <li><a href="/docs/${link.entry.name}">${escapeHtml(link.title)}</a><p>${escapeHtml(link.description)}</p></li>`).join('\n')}
        </ul>`);
  return pageShell({
    title: 'Hook docs',
    description: 'Documentation for the Hook webhook relay and its hook CLI.',
    stylesheets: ['/assets/docs.css'],
    bodyClass: 'docs',
    header: siteHeader({ docs: true }),
    body: `  <div class="docs-layout">
${sidebar(links, undefined)}
    <main id="main" class="docs-main">
      <article class="doc-content doc-index">
        <h1>Documentation</h1>
        <p class="lead">How to receive, store, deliver and replay webhooks with Hook: start with the <a href="/docs/quickstart">quickstart</a>; the REST API is also described in <a href="/openapi.json">OpenAPI</a>.</p>
${sections.join('\n') || '        <p class="muted">No docs/ directory beside this relay.</p>'}
      </article>
    </main>
  </div>`,
  });
}
