// The console's pages: a hash route pattern -> the page component, its title and, for
// top-level pages, the label of its link in the navigation. main.tsx renders the first
// route whose pattern matches the hash (without its ?query); a page gets the whole hash
// (for its query) and the pattern's match (for ids). To add a page: one line here.
import type { ComponentType } from 'preact';
import { EventsRoute } from './events.tsx';
import { EndpointsPage } from './endpoints.tsx';
import { EndpointDetailPage } from './endpoint-detail.tsx';
import { AccountPage } from './account-page.tsx';
import { IssuePage, IssuesPage } from './issues.tsx';

export interface RouteProps { hash: string; match: RegExpExecArray }

export interface Route {
  pattern: RegExp;
  page: ComponentType<RouteProps>;
  /** document.title's first part. */
  title: string;
  /** A link in the navigation: label and href. Sub-pages leave it out; the link whose href starts their hash is current. */
  nav?: { label: string; href: string };
}

export const routes: Route[] = [
  // One component for the list and an opened event: the list stays as it is beside (or behind) the event.
  { pattern: /^#\/events\/(evt_[\w-]+)$/, page: EventsRoute, title: 'Event' },
  { pattern: /^#\/events$/, page: EventsRoute, title: 'Events', nav: { label: 'Events', href: '#/events' } },
  { pattern: /^#\/issues\/(iss_[\w-]+)$/, page: ({ match }) => <IssuePage id={match[1]!} key={match[1]} />, title: 'Issue' },
  { pattern: /^#\/issues$/, page: ({ hash }) => <IssuesPage hash={hash} />, title: 'Issues', nav: { label: 'Issues', href: '#/issues' } },
  { pattern: /^#\/endpoints\/(ep_[\w-]+)$/, page: ({ match }) => <EndpointDetailPage id={match[1]!} key={match[1]} />, title: 'Endpoint' },
  { pattern: /^#\/endpoints$/, page: () => <EndpointsPage />, title: 'Endpoints', nav: { label: 'Endpoints', href: '#/endpoints' } },
  { pattern: /^#\/account$/, page: () => <AccountPage />, title: 'Account', nav: { label: 'Account', href: '#/account' } },
];

/** The route for a hash; anything unknown shows the events list. */
export function routeFor(hash: string): { route: Route; match: RegExpExecArray } {
  const path = hash.split('?')[0]!;
  for (const route of routes) {
    const match = route.pattern.exec(path);
    if (match) return { route, match };
  }
  return { route: routes.find((route) => route.nav?.href === '#/events')!, match: /.*/.exec(path)! };
}
