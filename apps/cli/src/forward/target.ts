/**
 * Where `hook listen` forwards: `hook listen 3000` → `http://127.0.0.1:3000`,
 * `hook listen http://localhost:8000/hooks` → that URL. The request URL of one event is
 * the target's path (or `--path`), then the path the event was sent to after the ingest
 * URL, then the target's query and the event's query:
 *
 *   hook listen 3000 --path /webhooks
 *   event POSTed to  {ingest_url}/stripe?account=7
 *   forwarded to     http://127.0.0.1:3000/webhooks/stripe?account=7
 *
 * Providers that put something in the path or query (a tenant, a provider name) reach
 * the local server as they would reach a deployed one mounted at the target path.
 */
import { UsageError } from '../errors.ts';

export interface ForwardTarget {
  /** The origin requests go to: `http://127.0.0.1:3000`. */
  origin: string;
  /** The base path (no trailing slash, "" for the root). */
  basePath: string;
  /** The target's own query, without "?" ("" when none). */
  baseQuery: string;
}

/** A TCP port, 1–65535, as the whole argument. */
const PORT = /^\d{1,5}$/;
/** `localhost:3000`, `127.0.0.1:3000`, `[::1]:3000`, `my-box:8080/hooks`: a URL without its scheme. */
const HOST_PORT = /^(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}(?:[/?].*)?$/i;

/** Reads the `<port|url>` argument of `hook listen`, and `--path`. */
export function parseForwardTarget(argument: string, pathOverride?: string): ForwardTarget {
  let url: URL;
  if (PORT.test(argument)) {
    const port = Number(argument);
    if (port < 1 || port > 65535) throw new UsageError(`Port ${argument} is out of range`, 'Give a port from 1 to 65535, or a URL such as http://localhost:3000/webhooks.');
    url = new URL(`http://127.0.0.1:${port}`);
  } else {
    const text = HOST_PORT.test(argument) ? `http://${argument}` : argument;
    if (!URL.canParse(text)) throw new UsageError(`'${argument}' is neither a port nor a URL`, 'Give a port (hook listen 3000) or a URL (hook listen http://localhost:3000/webhooks).');
    url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`'${argument}' is not an http:// or https:// URL`, 'Give a port (hook listen 3000) or a URL (hook listen http://localhost:3000/webhooks).');
    }
  }
  if (pathOverride !== undefined && !pathOverride.startsWith('/')) {
    throw new UsageError(`--path '${pathOverride}' must start with /`, 'Pass the path on your server, e.g. --path /webhooks/stripe.');
  }
  const basePath = (pathOverride ?? url.pathname).replace(/\/+$/, '');
  return { origin: url.origin, basePath, baseQuery: url.search.replace(/^\?/, '') };
}

/** The URL one event is forwarded to (see the module comment). */
export function forwardUrl(target: ForwardTarget, eventPath: string, eventQuery: string): string {
  return `${target.origin}${forwardPath(target, eventPath, eventQuery)}`;
}

/** The path and query of that URL, as the request line has them. */
export function forwardPath(target: ForwardTarget, eventPath: string, eventQuery: string): string {
  const suffix = eventPath === '' || eventPath.startsWith('/') ? eventPath : `/${eventPath}`;
  const path = `${target.basePath}${suffix}` || '/';
  const query = target.baseQuery && eventQuery ? `${target.baseQuery}&${eventQuery}` : target.baseQuery || eventQuery;
  return query ? `${path}?${query}` : path;
}

/** The target as people read it: `http://127.0.0.1:3000/webhooks`. */
export function describeTarget(target: ForwardTarget): string {
  return `${target.origin}${target.basePath || '/'}${target.baseQuery ? `?${target.baseQuery}` : ''}`;
}

