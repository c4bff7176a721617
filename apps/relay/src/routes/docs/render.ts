/**
 * One docs/*.md page to HTML: markdown-it with raw HTML off, then sanitize-html over its
 * output with an allow-list of what markdown produces (defence in depth: a doc is
 * repository content, but the renderer must not be the only thing between a markdown
 * file and a script). Code is highlighted on the server, so the page needs no
 * highlighter and the CSP no `unsafe-*`.
 */
import MarkdownIt from 'markdown-it';
import type { Env, StateCore, StateInline, Token } from 'markdown-it';
import { createRequire } from 'node:module';
import sanitizeHtml from 'sanitize-html';

/**
 * The part of highlight.js used here. It is loaded untyped (require) because its type
 * declarations pull in the DOM's lib, whose `fetch` types then refuse Node's Buffer
 * bodies in every project that reaches this file.
 */
interface Highlighter {
  newInstance(): Highlighter;
  registerLanguage(name: string, language: unknown): void;
  getLanguage(name: string): unknown;
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
}
const require = createRequire(import.meta.url);
const hljs = require('highlight.js/lib/core') as Highlighter;
const language = (name: string): unknown => require(`highlight.js/lib/languages/${name}`);

/** A heading of a rendered page, with the id its anchor links to. */
export interface DocHeading {
  level: number;
  id: string;
  text: string;
}

/** A stretch of a page for search: from a heading (or the top, `id` '') to the next. */
export interface DocSection {
  id: string;
  heading: string;
  text: string;
}

export interface RenderedDoc {
  /** The first `# ` heading as plain text, or the file name. */
  title: string;
  /** The first paragraph's first sentence, plain text, for the index. */
  description: string;
  /** Sanitized HTML of the whole page, its `<h1>` included. */
  html: string;
  headings: DocHeading[];
  sections: DocSection[];
}

/** Languages in docs/ fences (aliases: sh, ts, js, yml, toml…); anything else is shown as plain text. */
const LANGUAGES = Object.fromEntries(['bash', 'http', 'ini', 'javascript', 'json', 'sql', 'typescript', 'yaml'].map((name) => [name, language(name)]));

/** What markdown-it (as configured here) and highlight.js produce, and nothing else. */
const SANITIZE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'a', 'ul', 'ol', 'li', 'blockquote', 'pre', 'code', 'span', 'em', 'strong', 's',
    'hr', 'br', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'div'],
  allowedAttributes: {
    a: ['href', 'rel', 'aria-label'],
    h1: ['id'], h2: ['id'], h3: ['id'], h4: ['id'], h5: ['id'], h6: ['id'],
    span: ['id'],
    ol: ['start'],
  },
  allowedClasses: {
    a: ['heading-anchor'],
    code: ['hljs', /^language-[a-z0-9-]+$/],
    span: [/^hljs-[a-z0-9_-]+$/, /^language-[a-z0-9-]+$/],
    div: ['table-wrap'],
    th: ['align-left', 'align-center', 'align-right'],
    td: ['align-left', 'align-center', 'align-right'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
};

/** GitHub's heading ids (so links written for GitHub work here): lower case, punctuation dropped, each space a hyphen. */
export function slugOf(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Where a link in a doc goes on the site. */
export type LinkTarget = { kind: 'doc' | 'anchor' | 'external'; href: string } | { kind: 'text' };

/**
 * `cli.md#x` → `/docs/cli#x` when docs/cli.md exists; `#x` stays; http(s) and mailto are
 * external; anything else (`../README.md`, a missing doc, another scheme) has no page on
 * the site, so it becomes its text rather than a broken link.
 */
export function linkTarget(href: string, docs: ReadonlySet<string>): LinkTarget {
  if (href.startsWith('#')) return { kind: 'anchor', href };
  if (/^(https?:\/\/|mailto:)/i.test(href)) return { kind: 'external', href };
  const doc = /^(?:\.\/)?([a-z0-9-]+)\.md(#[^#\s]*)?$/.exec(href);
  if (doc && docs.has(doc[1]!)) return { kind: 'doc', href: `/docs/${doc[1]}${doc[2] ?? ''}` };
  return { kind: 'text' };
}

function plainText(children: Token[] | null): string {
  return (children ?? []).map((child) => child.type === 'text' || child.type === 'code_inline' ? child.content : child.type === 'softbreak' || child.type === 'hardbreak' ? ' ' : '').join('');
}

interface RenderEnv extends Env {
  docs: ReadonlySet<string>;
  headings: DocHeading[];
}

/** Headings get ids (deduplicated as GitHub does: `x`, `x-1`…), kept for the page's table of contents. */
function headingIds(state: StateCore): void {
  const env = state.env as unknown as RenderEnv;
  const used = new Map<string, number>();
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length; i++) {
    const open = tokens[i]!;
    if (open.type !== 'heading_open') continue;
    const text = plainText(tokens[i + 1]?.children ?? null).trim();
    const base = slugOf(text) || 'section';
    let id = base;
    while (used.has(id)) {
      used.set(base, used.get(base)! + 1);
      id = `${base}-${used.get(base)}`;
    }
    used.set(id, 0);
    open.attrSet('id', id);
    const level = Number(open.tag.slice(1));
    const close = tokens.slice(i + 1).find((token) => token.type === 'heading_close');
    if (close) close.meta = { id, text, level };
    env.headings.push({ level, id, text });
  }
}

/** Links resolved against the site (see linkTarget); images become their alt text (the CSP loads none from docs/). */
function siteLinks(state: StateCore): void {
  const env = state.env as unknown as RenderEnv;
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const children: Token[] = [];
    let droppingLink = false;
    for (const child of block.children) {
      if (child.type === 'link_open') {
        const target = linkTarget(String(child.attrGet('href') ?? ''), env.docs);
        if (target.kind === 'text') {
          droppingLink = true;
          continue;
        }
        child.attrSet('href', target.href);
        if (target.kind === 'external') child.attrSet('rel', 'noopener noreferrer');
      } else if (child.type === 'link_close' && droppingLink) {
        droppingLink = false;
        continue;
      } else if (child.type === 'image') {
        const alt = new state.Token('text', '', 0);
        alt.content = child.content;
        children.push(alt);
        continue;
      }
      children.push(child);
    }
    block.children = children;
  }
}

/** `- [ ] x` / `- [x] x`: a box drawn as a character (no form controls in a page of text). */
function taskLists(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = 2; i < tokens.length; i++) {
    const inline = tokens[i]!;
    if (inline.type !== 'inline' || tokens[i - 1]!.type !== 'paragraph_open' || tokens[i - 2]!.type !== 'list_item_open') continue;
    const first = inline.children?.[0];
    const box = first?.type === 'text' ? /^\[([ xX])\] /.exec(first.content) : null;
    if (!first || !box) continue;
    first.content = `${box[1] === ' ' ? '☐' : '☑'} ${first.content.slice(4)}`;
  }
}

/** Column alignment as a class: the sanitizer lets no style attribute through. */
function alignmentClasses(state: StateCore): void {
  for (const token of state.tokens) {
    if (token.type !== 'th_open' && token.type !== 'td_open') continue;
    const align = /text-align:\s*(left|center|right)/.exec(String(token.attrGet('style') ?? ''))?.[1];
    token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style');
    if (align) token.attrSet('class', `align-${align}`);
  }
}

/**
 * `<a id="name"></a>`, the one piece of HTML docs/ uses (a link target inside a paragraph),
 * becomes an empty span with that id; any other HTML stays text.
 */
function anchorTargets(state: StateInline, silent: boolean): boolean {
  const match = /^<a id="([a-z0-9][a-z0-9-]*)"><\/a>/.exec(state.src.slice(state.pos));
  if (!match) return false;
  if (!silent) state.push('anchor_target', 'span', 0).attrSet('id', match[1]!);
  state.pos += match[0].length;
  return true;
}

/** A markdown-it and a highlight.js of its own per relay (highlight.js/lib/core's default instance is shared by its importers). */
export function createDocRenderer(): (name: string, markdown: string, docs: ReadonlySet<string>) => RenderedDoc {
  const highlighter = hljs.newInstance();
  for (const [name, language] of Object.entries(LANGUAGES)) highlighter.registerLanguage(name, language);
  const highlight = (code: string, language: string): string =>
    language && highlighter.getLanguage(language) ? highlighter.highlight(code, { language, ignoreIllegals: true }).value : '';
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false, highlight });
  md.inline.ruler.before('html_inline', 'anchor_target', anchorTargets);
  md.core.ruler.push('heading_ids', headingIds);
  md.core.ruler.push('site_links', siteLinks);
  md.core.ruler.push('task_lists', taskLists);
  md.core.ruler.push('alignment_classes', alignmentClasses);
  const escape = md.utils.escapeHtml;
  md.renderer.rules.anchor_target = (tokens, index) => `<span id="${escape(String(tokens[index]!.attrGet('id') ?? ''))}"></span>`;
  md.renderer.rules.table_open = () => '<div class="table-wrap"><table>\n';
  md.renderer.rules.table_close = () => '</table></div>\n';
  md.renderer.rules.heading_close = (tokens, index) => {
    const token = tokens[index]!;
    const meta = token.meta as { id: string; text: string; level: number } | null;
    if (!meta || meta.level < 2) return `</${token.tag}>\n`;
    return `<a class="heading-anchor" href="#${escape(meta.id)}" aria-label="Link to this section: ${escape(meta.text)}">#</a></${token.tag}>\n`;
  };

  return (name, markdown, docs) => {
    const env: RenderEnv = { docs, headings: [] };
    const tokens = md.parse(markdown, env);
    const html = sanitizeHtml(md.renderer.render(tokens, md.options, env), SANITIZE_OPTIONS);
    const title = env.headings.find((heading) => heading.level === 1)?.text || name;
    return { title, description: descriptionOf(tokens), html, headings: env.headings, sections: sectionsOf(tokens) };
  };
}

/**
 * The first top-level paragraph's first sentence. Many docs open with "X does three
 * things:" and a list; that colon ends the line as a full stop.
 */
function descriptionOf(tokens: Token[]): string {
  const index = tokens.findIndex((token) => token.type === 'paragraph_open' && token.level === 0);
  const text = index < 0 ? '' : plainText(tokens[index + 1]?.children ?? null).replace(/\s+/g, ' ').trim();
  const sentence = (/^.{20,}?[.:](?=\s|$)/.exec(text)?.[0] ?? text).replace(/:$/, '.');
  return sentence.length > 220 ? `${sentence.slice(0, 220).replace(/\s+\S*$/, '')}…` : sentence;
}

/** The page's text split at its h2 and h3 headings, for the search index. */
function sectionsOf(tokens: Token[]): DocSection[] {
  const sections: DocSection[] = [{ id: '', heading: '', text: '' }];
  const parts: string[][] = [[]];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === 'heading_open') {
      const text = plainText(tokens[i + 1]?.children ?? null).trim();
      if (token.tag === 'h2' || token.tag === 'h3') {
        sections.push({ id: String(token.attrGet('id') ?? ''), heading: text, text: '' });
        parts.push([]);
      }
      i += 2;
      continue;
    }
    if (token.type === 'inline') parts.at(-1)!.push(plainText(token.children));
    else if (token.type === 'fence' || token.type === 'code_block') parts.at(-1)!.push(token.content);
  }
  return sections.map((section, index) => ({ ...section, text: parts[index]!.join(' ').replace(/\s+/g, ' ').trim() }))
    .filter((section) => section.heading || section.text);
}
