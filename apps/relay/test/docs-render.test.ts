import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createDocRenderer, linkTarget, slugOf } from '../src/routes/docs/render.ts';
import { createDocSite, type SearchIndex } from '../src/routes/docs/site.ts';

const DOCS = new URL('../../../docs/', import.meta.url);
const render = createDocRenderer();
const DOC_NAMES = new Set(['cli', 'quickstart']);

describe('the docs renderer', () => {
  it('renders markdown: bold, code, tables, lists, blockquotes', () => {
    const { html } = render('x', '# Title\n\nSome **bold** and `code`.\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n- one\n- two\n\n> quoted\n', DOC_NAMES);
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code>code</code>');
    expect(html).not.toContain('**');
    expect(html).toContain('<div class="table-wrap"><table>');
    expect(html).toContain('<th class="align-right">b</th>'); // alignment as a class: no style attribute survives
    expect(html).not.toContain('style=');
    expect(html).toMatch(/<ul>\s*<li>one<\/li>/);
    expect(html).toContain('<blockquote>');
  });

  it('makes a hostile doc inert: no script, no handler, no javascript: link, no image', () => {
    const markdown = [
      '# Hostile',
      '<script>alert(1)</script>',
      '',
      'Inline <img src=x onerror=alert(1)> and <a href="javascript:alert(2)">a</a> and <a id="x" onclick="alert(3)"></a>.',
      '',
      '[x](javascript:alert(1)) [y](JAVASCRIPT:alert(1)) [z](data:text/html;base64,PHNjcmlwdD4=) [w](vbscript:msgbox) <javascript:alert(4)>',
      '',
      '![pic](https://example.com/a.png "t") [ref][r]',
      '',
      '[r]: javascript:alert(5)',
      '',
      '```html',
      '<script>alert(6)</script>',
      '```',
    ].join('\n');
    const { html } = render('hostile', markdown, DOC_NAMES);
    expect(html).not.toMatch(/<script|<img|<iframe|<style/i);
    expect(html).not.toMatch(/<[a-z][^>]*\son[a-z]+\s*=/i); // a handler attribute on any element
    expect(html).not.toMatch(/<a\s[^>]*href="(javascript|data|vbscript):/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;'); // shown as the text it is
    expect(html).toContain('pic'); // an image is its alt text (nothing is loaded from a doc)
    expect([...html.matchAll(/<a [^>]*>/g)].map(([tag]) => tag)).toEqual([]);
  });

  it('gives headings GitHub\'s ids (deduplicated) and a # link to themselves', () => {
    const { html, headings } = render('x', '# The `hook` CLI\n\n## GET /v1/events\n\n## Where they run (transformation threads)\n\n### Notes\n\n### Notes\n\n## `hook listen`\n', DOC_NAMES);
    expect(headings).toEqual([
      { level: 1, id: 'the-hook-cli', text: 'The hook CLI' },
      { level: 2, id: 'get-v1events', text: 'GET /v1/events' },
      { level: 2, id: 'where-they-run-transformation-threads', text: 'Where they run (transformation threads)' },
      { level: 3, id: 'notes', text: 'Notes' },
      { level: 3, id: 'notes-1', text: 'Notes' },
      { level: 2, id: 'hook-listen', text: 'hook listen' },
    ]);
    expect(html).toContain('<h2 id="get-v1events">GET /v1/events<a class="heading-anchor" href="#get-v1events" aria-label="Link to this section: GET /v1/events">#</a></h2>');
    expect(html).toContain('<h1 id="the-hook-cli">The <code>hook</code> CLI</h1>');
    expect(slugOf('Signature schemes: v1 and v1a')).toBe('signature-schemes-v1-and-v1a');
  });

  it('links between docs go to their pages; links out of docs/ become text; external links get rel', () => {
    const markdown = '# L\n\nSee [the CLI](cli.md#hook-listen), [top](#l), [start](./quickstart.md), [changes](../CHANGELOG.md), '
      + '[gone](missing.md), [site](https://example.com/a?b=c) and [mail](mailto:a@example.com).\n';
    const { html } = render('l', markdown, DOC_NAMES);
    expect(html).toContain('<a href="/docs/cli#hook-listen">the CLI</a>');
    expect(html).toContain('<a href="#l">top</a>');
    expect(html).toContain('<a href="/docs/quickstart">start</a>');
    expect(html).toContain(', changes, gone, ');
    expect(html).toContain('<a href="https://example.com/a?b=c" rel="noopener noreferrer">site</a>');
    expect(html).toContain('<a href="mailto:a@example.com" rel="noopener noreferrer">mail</a>');
    expect(linkTarget('cli.md', new Set())).toEqual({ kind: 'text' });
    expect(linkTarget('../docs/cli.md', DOC_NAMES)).toEqual({ kind: 'text' });
  });

  it('highlights fenced code of the docs\' languages on the server; other fences stay plain, escaped', () => {
    const { html } = render('c', '# C\n\n```sh\ncurl -s -X POST "$URL" # go\n```\n\n```json\n{"a": 1}\n```\n\n```brainfuck\n<+>\n```\n', DOC_NAMES);
    expect(html).toMatch(/<pre><code class="language-sh">.*<span class="hljs-string">"<span class="hljs-variable">\$URL<\/span>"<\/span>.*<span class="hljs-comment"># go<\/span>/s);
    expect(html).toMatch(/<code class="language-json">.*<span class="hljs-attr">"a"<\/span>.*<span class="hljs-number">1<\/span>/s);
    expect(html).toContain('<pre><code class="language-brainfuck">&lt;+&gt;\n</code></pre>');
  });

  it('keeps the one HTML link target docs use, draws task boxes, and describes a page by its first sentence', () => {
    const doc = render('t', '# T\n\nThe first sentence is here. The second is not.\n\n<a id="relay-urls"></a>**Relay URLs** are checked.\n\n- [ ] open\n- [x] done\n', DOC_NAMES);
    expect(doc.html).toContain('<span id="relay-urls"></span><strong>Relay URLs</strong>');
    expect(doc.html).toContain('<li>☐ open</li>');
    expect(doc.html).toContain('<li>☑ done</li>');
    expect(doc.title).toBe('T');
    expect(doc.description).toBe('The first sentence is here.');
  });

  it('splits a page into sections for search, with their plain text', () => {
    const doc = render('s', '# S\n\nIntro `text`.\n\n## Install it\n\nRun:\n\n```sh\nnpm install\n```\n\n### Deeper\n\nMore [words](cli.md).\n', DOC_NAMES);
    expect(doc.sections).toEqual([
      { id: '', heading: '', text: 'Intro text.' },
      { id: 'install-it', heading: 'Install it', text: 'Run: npm install' },
      { id: 'deeper', heading: 'Deeper', text: 'More words.' },
    ]);
  });

  it('every link between the repository\'s docs lands on a page and a heading that exist', async () => {
    const names = (await readdir(DOCS)).filter((file) => /^[a-z0-9-]+\.md$/.test(file)).map((file) => file.slice(0, -3));
    const docs = new Set(names);
    const pages = new Map(await Promise.all(names.map(async (name) => [name, render(name, await readFile(new URL(`${name}.md`, DOCS), 'utf8'), docs)] as const)));
    const broken: string[] = [];
    for (const [name, page] of pages) {
      for (const [, href] of page.html.matchAll(/<a href="([^"]*)"/g)) {
        if (!href!.startsWith('#') && !href!.startsWith('/docs/')) continue;
        const [path, fragment] = href!.startsWith('#') ? [name, href!.slice(1)] : href!.slice('/docs/'.length).split('#') as [string, string | undefined];
        const target = pages.get(path!);
        if (!target || (fragment && !target.html.includes(` id="${fragment}"`))) broken.push(`${name}.md → ${href}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the docs site', () => {
  it('orders docs for reading (Quickstart first), skips listed docs that are missing, puts new ones last, and indexes them for search', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hook-docs-'));
    try {
      for (const [file, text] of [['api.md', '# HTTP API\n\nRoutes.\n'], ['quickstart.md', '# Quickstart\n\nStart here.\n\n## With the CLI\n\nRun `hook listen 3000`.\n'],
        ['zebra.md', '# Zebra notes\n\nNew.\n'], ['aardvark.md', '# Aardvark\n\nAlso new.\n'], ['cli.md', '# CLI\n\nCommands.\n'], ['README.txt', 'not a doc'], ['Bad Name.md', '# no']]) {
        await writeFile(join(dir, file!), text!);
      }
      const site = createDocSite(pathToFileURL(`${dir}/`));
      expect((await site.entries()).map(({ name, group }) => `${group}/${name}`)).toEqual(['Get started/quickstart', 'Get started/cli', 'Get started/api', 'More/aardvark', 'More/zebra']);
      expect(await site.render('Bad Name')).toBeUndefined();
      expect(await site.markdown('../package')).toBeUndefined();
      expect((await site.render('zebra'))?.title).toBe('Zebra notes');
      const index = JSON.parse(await site.searchIndex()) as SearchIndex;
      expect(index.pages.map((page) => page.name)).toEqual(['quickstart', 'cli', 'api', 'aardvark', 'zebra']);
      expect(index.pages[0]!.sections).toEqual([{ id: '', heading: '', text: 'Start here.' }, { id: 'with-the-cli', heading: 'With the CLI', text: 'Run hook listen 3000.' }]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is empty when there is no docs/ directory', async () => {
    const site = createDocSite(pathToFileURL(join(tmpdir(), 'hook-no-such-docs-dir/')));
    expect(await site.entries()).toEqual([]);
    expect(await site.searchIndex()).toBe('{"pages":[]}');
  });
});
