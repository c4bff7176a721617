/**
 * The docs site's content: which docs/*.md exist, in what order a reader meets them, each
 * rendered once (docs/ is read-only while the relay runs) and the search index built once.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createDocRenderer, type RenderedDoc } from './render.ts';

/** The sidebar: reading order, grouped. Docs not listed here follow under "More"; listed ones that are missing are skipped. */
const READING_ORDER: { group: string; docs: [name: string, label: string][] }[] = [
  { group: 'Get started', docs: [['quickstart', 'Quickstart'], ['listen', 'Listen'], ['cli', 'CLI'], ['api', 'API']] },
  {
    group: 'Guides',
    docs: [['receiving', 'Receiving'], ['delivery', 'Delivery'], ['sources', 'Sources'], ['filters', 'Filters'], ['transformations', 'Transformations'],
      ['issues', 'Issues'], ['alerts', 'Alerts'], ['notifications', 'Notifications'], ['console', 'Console'], ['playground', 'Playground'], ['agents', 'Agents']],
  },
  { group: 'Reference', docs: [['errors', 'Errors'], ['configuration', 'Configuration']] },
  {
    group: 'Operate',
    docs: [['deployment', 'Deployment'], ['scaling', 'Scaling'], ['security', 'Security'], ['retention', 'Retention'], ['limits', 'Limits'],
      ['plans', 'Plans'], ['performance', 'Performance'], ['versioning', 'Versioning'], ['ingest-profile', 'Ingest profile']],
  },
];
const OTHER_GROUP = 'More';

/** A doc's place on the site; `label` is its sidebar name, the page's own title is in RenderedDoc. */
export interface DocEntry {
  name: string;
  group: string;
  /** Undefined for a doc outside READING_ORDER: its title is the label. */
  label: string | undefined;
}

/** What /docs/search-index.json holds: per page, its sections' plain text. */
export interface SearchIndex {
  pages: { name: string; title: string; sections: { id: string; heading: string; text: string }[] }[];
}

export interface DocSite {
  /** Every doc, in reading order. */
  entries(): Promise<DocEntry[]>;
  /** The doc rendered, or undefined when docs/ has no such file. */
  render(name: string): Promise<RenderedDoc | undefined>;
  markdown(name: string): Promise<string | undefined>;
  searchIndex(): Promise<string>;
}

/** Names as `docs/<name>.md` may spell them: nothing that could leave the directory. */
const DOC_FILE = /^[a-z0-9-]+\.md$/;

/** The docs in `dir`, read on first use and kept (one per relay: a test relay that never opens /docs/ reads nothing). */
export function createDocSite(dir: URL): DocSite {
  const render = createDocRenderer();
  let entries: Promise<DocEntry[]> | undefined;
  const sources = new Map<string, Promise<string>>();
  const rendered = new Map<string, Promise<RenderedDoc>>();
  let searchIndex: Promise<string> | undefined;

  const site: DocSite = {
    entries: () => entries ??= readdir(dir).then(
      (files) => ordered(files.filter((file) => DOC_FILE.test(file)).map((file) => file.slice(0, -3))),
      () => [], // no docs/ beside this relay: an empty site
    ),
    async markdown(name) {
      if (!(await site.entries()).some((entry) => entry.name === name)) return undefined;
      let source = sources.get(name);
      if (!source) sources.set(name, source = readFile(new URL(`${name}.md`, dir), 'utf8'));
      return source;
    },
    async render(name) {
      const names = new Set((await site.entries()).map((entry) => entry.name));
      if (!names.has(name)) return undefined;
      let page = rendered.get(name);
      if (!page) rendered.set(name, page = site.markdown(name).then((markdown) => render(name, markdown!, names)));
      return page;
    },
    searchIndex: () => searchIndex ??= site.entries().then(async (list) => {
      const pages = await Promise.all(list.map(async ({ name }) => {
        const doc = (await site.render(name))!;
        return { name, title: doc.title, sections: doc.sections };
      }));
      return JSON.stringify({ pages } satisfies SearchIndex);
    }),
  };
  return site;
}

function ordered(names: string[]): DocEntry[] {
  const present = new Set(names);
  const listed = READING_ORDER.flatMap(({ group, docs }) =>
    docs.filter(([name]) => present.has(name)).map(([name, label]) => ({ name, group, label })));
  const known = new Set(listed.map((entry) => entry.name));
  const others = names.filter((name) => !known.has(name)).sort().map((name) => ({ name, group: OTHER_GROUP, label: undefined }));
  return [...listed, ...others];
}
