// The console's frame around every page: a sidebar on wide screens (brand, live state,
// the navigation from routes.tsx, theme, who is signed in, sign out) that becomes a top
// bar with the navigation in a menu on narrow ones. One DOM for both; console.css
// arranges it. The pages render their own <main id="main">.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Session } from './api.ts';
import { routes } from './routes.tsx';

/** The theme switch's first label; /assets/theme.js keeps it current after each click. */
export function themeLabel(): string {
  let choice = 'system';
  try { choice = localStorage.getItem('hook-theme') ?? 'system'; } catch { /* private mode */ }
  return `Theme: ${choice === 'light' || choice === 'dark' ? choice : 'system'}`;
}

/** Moves focus to the page's <main> without touching the hash (the hash is the route). */
function skipToMain(click: Event): void {
  click.preventDefault();
  const main = document.getElementById('main');
  if (!main) return;
  main.tabIndex = -1;
  main.focus();
}

export function Shell({ session, live, path, onSignOut, children }: { session: Session; live: boolean; path: string; onSignOut: () => void; children: ComponentChildren }) {
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  const current = (href: string) => (path === href || path.startsWith(`${href}/`) ? 'page' : undefined);
  return (
    <div class="shell">
      <a href="#main" class="skip-link" onClick={skipToMain}>Skip to content</a>
      <aside class="sidebar">
        <a href="#/events" class="brand"><span class="brand-mark" aria-hidden="true">◆</span> Hook <span class="brand-sub">console</span></a>
        <span class={live ? 'live on' : 'live'} role="status" title={live ? 'Live' : 'Connecting…'}><span class="live-text">{live ? 'Live' : 'Connecting…'}</span></span>
        <button type="button" class="menu-button small" aria-expanded={menuOpen ? 'true' : 'false'} aria-controls="sidebar-menu" onClick={() => setMenuOpen(!menuOpen)}>
          {menuOpen ? 'Close menu' : 'Menu'}
        </button>
        <div id="sidebar-menu" class={`sidebar-menu${menuOpen ? ' open' : ''}`}>
          <nav aria-label="Console">
            <ul>
              {routes.filter((route) => route.nav).map(({ nav }) => (
                <li key={nav!.href}><a href={nav!.href} aria-current={current(nav!.href)}>{nav!.label}</a></li>
              ))}
            </ul>
          </nav>
          <div class="sidebar-foot">
            <button type="button" class="theme-toggle small" data-theme-toggle>{themeLabel()}</button>
            <p class="who"><span class="visually-hidden">Signed in with the key </span><span class="mono">{session.key_prefix}…</span> <span class="quiet">{session.role}</span></p>
          </div>
        </div>
        <button type="button" id="sign-out" class="small" onClick={onSignOut}>Sign out</button>
      </aside>
      <div class="content">{children}</div>
    </div>
  );
}
