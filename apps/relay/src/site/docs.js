// The docs site's and landing page's behaviour (served at /assets/docs.js, a module: the
// CSP allows no inline script). Each part improves a page that works without it: code
// can be selected by hand, the sidebar is reachable by its #docs-nav link, and the
// search box is a link to the index.

/**
 * Every code block of a doc (and the landing page's commands) gets a Copy button. Code
 * blocks and tables scroll sideways on narrow screens, so they take the keyboard's focus
 * (arrow keys then scroll them).
 */
function addCopyButtons() {
  for (const region of document.querySelectorAll('.doc-content pre, pre.copyable, .table-wrap')) region.tabIndex = 0;
  for (const pre of document.querySelectorAll('.doc-content pre, pre.copyable')) {
    const wrapper = document.createElement('div');
    wrapper.className = 'code-block';
    pre.replaceWith(wrapper);
    wrapper.append(pre);
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy-button';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', 'Copy this code');
    let reset;
    button.addEventListener('click', async () => {
      const text = (pre.querySelector('code') ?? pre).textContent.replace(/\n$/, '');
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = 'Copied';
      } catch {
        // No clipboard access (an insecure origin, a refused permission): select it for Ctrl-C.
        getSelection()?.selectAllChildren(pre);
        button.textContent = 'Press Ctrl+C';
      }
      clearTimeout(reset);
      reset = setTimeout(() => { button.textContent = 'Copy'; }, 2000);
    });
    wrapper.append(button);
  }
}

/** On narrow screens the sidebar is hidden (docs.css); the Menu link becomes a button that shows it. */
function sidebarToggle() {
  const link = document.querySelector('a.nav-toggle');
  const nav = document.getElementById('docs-nav');
  if (!link || !nav) return;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = link.className;
  button.textContent = link.textContent;
  button.setAttribute('aria-controls', 'docs-nav');
  button.setAttribute('aria-expanded', 'false');
  link.replaceWith(button);
  button.addEventListener('click', () => {
    const open = document.body.classList.toggle('nav-open');
    button.setAttribute('aria-expanded', String(open));
    if (open) nav.querySelector('a[aria-current="page"], a')?.focus();
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && document.body.classList.contains('nav-open')) {
      document.body.classList.remove('nav-open');
      button.setAttribute('aria-expanded', 'false');
      button.focus();
    }
  });
}

// ---- search -------------------------------------------------------------------------

const MAX_RESULTS = 8;

/** Lower-case words of a text: what a query's words are matched against (as prefixes). */
function words(text) {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** /docs/search-index.json flattened to sections with their words, fetched on first use. */
let sections;
function loadIndex() {
  sections ??= fetch('/docs/search-index.json')
    .then((response) => {
      if (!response.ok) throw new Error(`search index: HTTP ${response.status}`);
      return response.json();
    })
    .then((index) => index.pages.flatMap((page) => page.sections.map((section) => ({
      page: page.name,
      pageTitle: page.title,
      id: section.id,
      heading: section.heading,
      text: section.text,
      titleWords: words(page.title),
      headingWords: words(section.heading),
      textWords: words(section.text),
      lowerHeading: section.heading.toLowerCase(),
      lowerTitle: page.title.toLowerCase(),
      lowerText: section.text.toLowerCase(),
    }))));
  return sections;
}

function hasPrefix(list, word) {
  return list.some((candidate) => candidate.startsWith(word));
}

/**
 * Every query word must start a word of the section (its page's title, its heading or its
 * text). Ranked: the whole query in the heading, then words in the heading, the page's
 * title, the phrase in the text, words in the text; the page's top before its sections.
 */
function score(section, query, queryWords) {
  let total = 0;
  for (const word of queryWords) {
    const inHeading = hasPrefix(section.headingWords, word);
    const inTitle = hasPrefix(section.titleWords, word);
    const inText = hasPrefix(section.textWords, word);
    if (!inHeading && !inTitle && !inText) return 0;
    total += (inHeading ? 10 : 0) + (inTitle ? (section.id === '' ? 8 : 3) : 0) + (inText ? 1 : 0);
  }
  if (section.lowerHeading === query) total += 40;
  else if (section.lowerHeading.includes(query)) total += 20;
  if (section.id === '' && section.lowerTitle.includes(query)) total += 20;
  if (section.lowerText.includes(query)) total += 5;
  return total;
}

function snippet(section, queryWords) {
  const found = queryWords.map((word) => section.lowerText.indexOf(word)).filter((index) => index >= 0);
  const at = found.length > 0 ? Math.min(...found) : 0;
  const start = at < 40 ? 0 : section.text.lastIndexOf(' ', at - 30) + 1;
  return `${start > 0 ? '…' : ''}${section.text.slice(start, start + 140)}`;
}

function search(all, raw) {
  const query = raw.trim().toLowerCase().replace(/\s+/g, ' ');
  const queryWords = words(query);
  if (queryWords.length === 0) return [];
  return all.map((section) => ({ section, score: score(section, query, queryWords) }))
    .filter((result) => result.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_RESULTS)
    .map(({ section }) => ({ section, snippet: snippet(section, queryWords) }));
}

/** The search link becomes a combobox: type to see results, arrows to choose, Enter to open, `/` to focus from anywhere. */
function searchBox() {
  const container = document.querySelector('[data-search]');
  if (!container) return;
  const input = document.createElement('input');
  input.type = 'search';
  input.id = 'docs-search';
  input.placeholder = 'Search the docs';
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-label', 'Search the docs');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-expanded', 'false');
  input.setAttribute('aria-controls', 'docs-search-results');
  const hint = document.createElement('kbd');
  hint.className = 'search-hint';
  hint.textContent = '/';
  hint.setAttribute('aria-hidden', 'true');
  const list = document.createElement('ul');
  list.id = 'docs-search-results';
  list.className = 'search-results';
  list.setAttribute('role', 'listbox');
  list.setAttribute('aria-label', 'Search results');
  list.hidden = true;
  container.setAttribute('role', 'search');
  container.replaceChildren(input, hint, list);

  let results = [];
  let active = -1;
  let generation = 0;

  function close() {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  }

  function select(index) {
    active = index;
    for (const [position, option] of [...list.children].entries()) option.setAttribute('aria-selected', String(position === index));
    const option = list.children[index];
    if (option?.id) {
      input.setAttribute('aria-activedescendant', option.id);
      option.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  }

  function show(query) {
    list.replaceChildren();
    if (!query.trim()) return close();
    if (results.length === 0) {
      const empty = document.createElement('li');
      empty.className = 'search-empty';
      empty.textContent = `Nothing in the docs matches "${query.trim()}".`;
      list.append(empty);
    }
    for (const [index, { section, snippet: text }] of results.entries()) {
      const option = document.createElement('li');
      option.id = `docs-result-${index}`;
      option.setAttribute('role', 'option');
      option.setAttribute('aria-selected', 'false');
      const link = document.createElement('a');
      link.href = `/docs/${section.page}${section.id ? `#${section.id}` : ''}`;
      link.tabIndex = -1;
      const title = document.createElement('span');
      title.className = 'result-title';
      if (section.heading) {
        const page = document.createElement('span');
        page.className = 'result-page';
        page.textContent = `${section.pageTitle} › `;
        title.append(page, section.heading);
      } else title.textContent = section.pageTitle;
      const context = document.createElement('span');
      context.className = 'result-snippet';
      context.textContent = text;
      link.append(title, context);
      option.append(link);
      list.append(option);
    }
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    select(results.length > 0 ? 0 : -1);
  }

  input.addEventListener('focus', () => { loadIndex().catch(() => {}); });
  input.addEventListener('input', async () => {
    const query = input.value;
    const mine = ++generation;
    let all;
    try {
      all = await loadIndex();
    } catch {
      sections = undefined; // try again on the next keystroke
      all = [];
    }
    if (mine !== generation) return; // a later keystroke has answered already
    results = search(all, query);
    show(query);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      if (results.length === 0) return;
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      select((active + step + results.length) % results.length);
    } else if (event.key === 'Enter') {
      const chosen = results[Math.max(active, 0)];
      if (!chosen || list.hidden) return;
      event.preventDefault();
      const link = list.children[Math.max(active, 0)]?.querySelector('a');
      if (link) location.assign(link.href);
    } else if (event.key === 'Escape') {
      if (!list.hidden) {
        event.preventDefault();
        close();
      } else input.value = '';
    }
  });
  // A press on a result keeps the focus in the box, so the click that follows still finds the list open.
  list.addEventListener('mousedown', (event) => event.preventDefault());
  input.addEventListener('blur', close);
  document.addEventListener('keydown', (event) => {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    event.preventDefault();
    input.focus();
    input.select();
  });
}

addCopyButtons();
sidebarToggle();
searchBox();
