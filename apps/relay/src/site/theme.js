// The theme switch shared by every page (served at /assets/theme.js). Loaded as a classic
// script in <head>, before the body is painted, so a stored dark choice never flashes
// light first; a file of the relay's own, so the CSP needs no inline script. Without a
// choice the page follows the system's setting (tokens.css); a choice is kept in
// localStorage and set as <html data-theme>. Any element with [data-theme-toggle] cycles system → light → dark.
const KEY = 'hook-theme';
const ORDER = ['system', 'light', 'dark'];
const LABEL = { system: 'Theme: system', light: 'Theme: light', dark: 'Theme: dark' };

function stored() {
  try { return localStorage.getItem(KEY) ?? 'system'; } catch { return 'system'; }
}

function apply(choice) {
  if (choice === 'light' || choice === 'dark') document.documentElement.dataset.theme = choice;
  else delete document.documentElement.dataset.theme;
  for (const toggle of document.querySelectorAll('[data-theme-toggle]')) {
    toggle.textContent = LABEL[choice] ?? LABEL.system;
    toggle.setAttribute('aria-label', `${LABEL[choice] ?? LABEL.system}. Change theme`);
  }
}

function initTheme() {
  apply(stored());
  // the toggles are in the body, parsed after this script ran
  document.addEventListener('DOMContentLoaded', () => apply(stored()));
  document.addEventListener('click', (event) => {
    const toggle = event.target instanceof Element ? event.target.closest('[data-theme-toggle]') : null;
    if (!toggle) return;
    const next = ORDER[(ORDER.indexOf(stored()) + 1) % ORDER.length];
    try { if (next === 'system') localStorage.removeItem(KEY); else localStorage.setItem(KEY, next); } catch { /* private mode: this page only */ }
    apply(next);
  });
}

initTheme();
