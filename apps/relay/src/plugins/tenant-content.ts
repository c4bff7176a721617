/**
 * Answers whose bytes a tenant controls (docs/security.md, "Tenant-controlled content on
 * the relay's origin"): an ingest URL's custom response, a handshake's echo, and every
 * other answer on those routes. They are served from the origin that holds console
 * sessions, so whatever a browser makes of them must not run there.
 */
import type { FastifyInstance } from 'fastify';
import { HookError, INGEST_HOST_ONLY } from '@hook/core';

/**
 * `sandbox` makes the document an opaque origin: no script, no form, no same-origin
 * request carrying the console's cookie, whatever the type or body. `default-src 'none'`
 * loads nothing; `frame-ancestors 'none'` keeps the page out of frames (no clickjacking
 * through a framed answer).
 */
export const TENANT_CONTENT_SECURITY_POLICY = "sandbox; default-src 'none'; frame-ancestors 'none'";

/**
 * Every answer in `scope`, refusals and errors included, goes with the sandbox policy and
 * `nosniff`. Set in onSend, after the handler and the error handler, so a header a
 * handler set (a custom response's) cannot replace or remove them.
 */
export function sandboxTenantContent(scope: FastifyInstance): void {
  scope.addHook('onSend', (_request, reply, _payload, done) => {
    reply.header('content-security-policy', TENANT_CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
}

/** The host name ingest is kept to (HOOK_INGEST_URL's), lower-cased as request.hostname is compared with it. */
export function ingestHostOf(ingestUrl: string): string {
  return new URL(ingestUrl).hostname.toLowerCase();
}

/**
 * Hosts that receive events and nothing else serve ingest URLs and health checks only:
 * HOOK_INGEST_URL's host, and every account's verified custom domain (a name a tenant
 * controls). The console, the playground and the API (cookie or key) are refused there,
 * so no session of the relay's is ever held on an origin tenant content is served from,
 * and no tenant's name serves the relay's sign-in page. Host names are compared without
 * ports, as cookies are.
 */
export function keepIngestHostsApart(app: FastifyInstance, ingestHost: string | null, customDomainOwner: (hostname: string) => Promise<string | null>): void {
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url ?? '';
    if (route.startsWith('/v1/ingest/') || route === '/healthz' || route === '/readyz') return;
    const host = request.hostname.toLowerCase();
    if (host === ingestHost || (await customDomainOwner(host)) !== null) throw new HookError(INGEST_HOST_ONLY, [host]);
  });
}
