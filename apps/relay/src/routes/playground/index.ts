import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { WebSocket } from 'ws';
import { createHash, randomBytes } from 'node:crypto';
import {
  encodeBody, EVENT_TYPE_EMPTY, HookError, newId,
  PAYLOAD_NOT_JSON, PLAYGROUND_ALREADY_CLAIMED, PLAYGROUND_TOKEN_INVALID, STREAM_HEARTBEAT_INTERVAL_MS,
} from '@hook/core';
import {
  Account, claimPlaygroundSession, Endpoint, Member, findPlaygroundSession, listEvents, insertPlaygroundSession, type PlaygroundSession,
} from '@hook/db';
import { errorResponses, EventSchema, EventSummarySchema, IdOf, IngestAccepted, SignupSchema, Timestamp } from '../../schemas.ts';
import { presentAccount } from '../accounts/index.ts';
import { createAccount, createApiKey } from '../accounts/new-account.ts';
import { createEndpoint } from '../endpoints/new-endpoint.ts';
import type { StoredEvent } from '../../stream/hub.ts';
import { presentStoredRequest } from '../events/present.ts';
import { publicBaseUrl } from '../endpoints/present.ts';
import { accountCreationRateLimit } from '../../plugins/rate-limit.ts';
import type { StreamHub } from '../../stream/hub.ts';
import { keepAlive } from '../../stream/socket.ts';

/** How long a temporary playground account lives unless claimed: 24 hours. */
export const PLAYGROUND_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** Most events the page's initial list shows. */
const PLAYGROUND_LIST_SIZE = 50;
/** Bytes of randomness in a playground token (`pgt_…`). */
const PLAYGROUND_TOKEN_BYTES = 32;

const ASSETS_DIR = new URL('../../playground/', import.meta.url);
const ASSETS = [
  { url: '/playground', file: 'index.html', type: 'text/html; charset=utf-8' },
  { url: '/playground/playground.css', file: 'playground.css', type: 'text/css; charset=utf-8' },
  { url: '/playground/playground.js', file: 'playground.js', type: 'text/javascript; charset=utf-8' },
];
/** Only the relay's own scripts, styles and connections (fetch and the WebSocket). */
const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The hash a token is stored and looked up under: SHA-256, like API keys (256 random bits need no slow hash). */
function hashPlaygroundToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The playground session the request's token opens (playground routes only). */
    playground: PlaygroundSession | null;
  }
}

/** The token from `Authorization: Bearer pgt_…`, or from `?token=` (the browser's WebSocket cannot send headers). */
function tokenOf(request: FastifyRequest): string | undefined {
  const header = /^Bearer\s+(pgt_\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (header) return header;
  const query = (request.query as { token?: unknown } | undefined)?.token;
  return typeof query === 'string' && query.startsWith('pgt_') ? query : undefined;
}

async function requireSession(request: FastifyRequest): Promise<void> {
  const token = tokenOf(request);
  const session = token ? await findPlaygroundSession(request.em, hashPlaygroundToken(token), new Date()) : null;
  if (!session) throw new HookError(PLAYGROUND_TOKEN_INVALID);
  request.playground = session;
}

type PlaygroundEvent = Pick<StoredEvent, 'id' | 'method' | 'path' | 'query' | 'headers' | 'size' | 'receivedAt' | 'status'> & {
  attemptCount?: number;
  type?: string | null;
  contentType?: string | null;
  body: Buffer | Uint8Array;
};

/** An event as the page shows it: the whole request, body included. */
function presentPlaygroundEvent(event: PlaygroundEvent) {
  return { ...presentStoredRequest(event), ...encodeBody(Buffer.from(event.body)) };
}

/** An event as the playground shows it: GET /v1/events/{id}'s fields but its endpoint, deliveries and attempts. */
const { endpoint_id: _endpoint, next_attempt_at: _next, last_attempt: _last, ...storedRequestFields } = EventSummarySchema.properties;
const PlaygroundEventSchema = Type.Object({ ...storedRequestFields, body: EventSchema.properties.body, body_encoding: EventSchema.properties.body_encoding });

const SessionSchema = Type.Object({
  account_id: IdOf('account', 'The temporary account'),
  endpoint: Type.Object({ id: IdOf('endpoint', 'Endpoint id'), url: Type.String({ description: 'The ingest URL: send events here' }) }),
  expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When the account and its data are removed; null once claimed' }),
  claimed: Type.Boolean(),
});

const TokenHeaders = Type.Object({ authorization: Type.Optional(Type.String({ description: 'Bearer pgt_… (the playground token)' })) });

export interface PlaygroundRouteOptions {
  hub: StreamHub;
  /** Base of the ingest URLs shown: HOOK_INGEST_URL, else HOOK_PUBLIC_URL; unset, each request's own. */
  ingestBaseUrl: string | undefined;
  heartbeatIntervalMs?: number;
  /** Sessions one client address may start per hour; 0 turns the limit off (HOOK_PLAYGROUND_RATE_LIMIT). */
  sessionsPerAddressPerHour: number;
  /** Accounts one client address may create per hour, signups and claims together; 0 turns the limit off (HOOK_SIGNUP_RATE_LIMIT). */
  signupsPerAddressPerHour: number;
}

/**
 * `/playground`: the no-signup page and what it calls. Opening the page makes a
 * temporary account with one endpoint (24 hours; the expiry job removes it) and gives
 * the page a token instead of an API key. Every route behind the token reads only that
 * account's playground endpoint. See docs/playground.md.
 */
export async function playgroundRoutes(app: FastifyInstance, options: PlaygroundRouteOptions): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? STREAM_HEARTBEAT_INTERVAL_MS;
  const sessionsPerHour = options.sessionsPerAddressPerHour;
  app.decorateRequest('playground', null);

  for (const asset of ASSETS) {
    const content = await readFile(new URL(asset.file, ASSETS_DIR));
    app.get(asset.url, { schema: { hide: true } }, (_request, reply: FastifyReply) =>
      reply.type(asset.type).header('content-security-policy', CONTENT_SECURITY_POLICY).header('cache-control', 'no-cache').send(content));
  }

  async function presentSession(request: FastifyRequest, session: PlaygroundSession) {
    const endpoint = await request.em.findOneOrFail(Endpoint, { id: session.endpointId, accountId: session.accountId }, { fields: ['ingestId'] });
    return {
      account_id: session.accountId,
      endpoint: { id: session.endpointId, url: `${publicBaseUrl(request, options.ingestBaseUrl)}/v1/ingest/${endpoint.ingestId}` },
      expires_at: session.expiresAt?.toISOString() ?? null,
      claimed: session.claimedAt !== null,
    };
  }

  api.post('/playground/session', {
    config: sessionsPerHour > 0 ? { rateLimit: { max: sessionsPerHour, timeWindow: '1 hour' } } : {},
    schema: {
      tags: ['playground'],
      summary: 'Start a playground: a temporary account and endpoint for 24 hours (no auth; rate-limited per address)',
      response: { 201: Type.Object({ token: Type.String({ description: 'pgt_…: opens this session; keep it secret' }), ...SessionSchema.properties }), ...errorResponses },
    },
  }, async (request, reply) => {
    const now = new Date();
    const token = `pgt_${randomBytes(PLAYGROUND_TOKEN_BYTES).toString('base64url')}`;
    const session: PlaygroundSession = {
      accountId: '', // set when the account is made below
      endpointId: newId('endpoint'),
      createdAt: now,
      expiresAt: new Date(now.getTime() + PLAYGROUND_LIFETIME_MS),
      claimedAt: null,
    };
    await request.em.transactional(async (em) => {
      const { account } = createAccount(em, { email: null, now });
      session.accountId = account.id;
      createEndpoint(em, { id: session.endpointId, accountId: session.accountId, name: 'playground', destination: { type: 'cli' } }, now);
      await em.flush();
      await insertPlaygroundSession(em, { ...session, tokenHash: hashPlaygroundToken(token), expiresAt: session.expiresAt! });
    });
    return reply.code(201).send({ token, ...(await presentSession(request, session)) });
  });

  await app.register(async (scoped) => {
    scoped.addHook('preHandler', requireSession);
    const scopedApi = scoped.withTypeProvider<TypeBoxTypeProvider>();

    scopedApi.get('/playground/session', {
      schema: { tags: ['playground'], summary: 'The session of a playground token', headers: TokenHeaders, response: { 200: SessionSchema, ...errorResponses } },
    }, async (request) => presentSession(request, request.playground!));

    scopedApi.get('/playground/events', {
      schema: {
        tags: ['playground'],
        summary: 'The playground endpoint\'s latest events, newest first, with bodies and headers',
        headers: TokenHeaders,
        response: { 200: Type.Object({ data: Type.Array(PlaygroundEventSchema) }), ...errorResponses },
      },
    }, async (request) => {
      const { accountId, endpointId } = request.playground!;
      const { events } = await listEvents(request.em, { accountId, endpointIds: [endpointId], limit: PLAYGROUND_LIST_SIZE, withBody: true });
      return { data: events.map((event) => presentPlaygroundEvent({ ...event, body: event.body! })) };
    });

    scopedApi.post('/playground/events', {
      schema: {
        tags: ['playground'],
        summary: 'Send a test event to the playground endpoint: a type (x-event-type) and a JSON payload, stored byte-exact',
        headers: TokenHeaders,
        body: Type.Object({
          type: Type.String({ maxLength: 200, description: 'The event type; must not be empty' }),
          payload: Type.String({ maxLength: 64 * 1024, description: 'JSON text, sent as the body exactly as given' }),
        }, { additionalProperties: false }),
        response: { 200: IngestAccepted, ...errorResponses },
      },
    }, async (request, reply) => {
      const type = request.body.type.trim();
      if (type === '') throw new HookError(EVENT_TYPE_EMPTY);
      try {
        JSON.parse(request.body.payload);
      } catch (error) {
        throw new HookError(PAYLOAD_NOT_JSON, [(error as Error).message]);
      }
      const endpoint = await request.em.findOneOrFail(Endpoint, { id: request.playground!.endpointId, accountId: request.playground!.accountId }, { fields: ['ingestId'] });
      // Through the ingest route itself, so a test event is stored and announced exactly as one sent with curl.
      const ingested = await app.inject({
        method: 'POST',
        url: `/v1/ingest/${endpoint.ingestId}`,
        // On the ingest host when ingest has its own (HOOK_INGEST_URL), which refuses ingest elsewhere.
        headers: { 'content-type': 'application/json', 'x-event-type': type, 'user-agent': 'hook-playground', ...(options.ingestBaseUrl ? { host: new URL(options.ingestBaseUrl).host } : {}) },
        payload: request.body.payload,
      });
      const answer = ingested.json();
      if (ingested.statusCode !== 200) answer.request_id = request.id; // the problem is this request's
      return reply.code(ingested.statusCode).type(ingested.headers['content-type'] as string).send(answer);
    });

    scopedApi.post('/playground/claim', {
      // Counted once the token is known good (requireSession is a scope hook, so it runs first).
      config: accountCreationRateLimit(options.signupsPerAddressPerHour, 'preHandler'),
      schema: {
        tags: ['playground'],
        summary: 'Keep the playground: the temporary account becomes a real one; its first API key is shown only here',
        headers: TokenHeaders,
        response: { 201: SignupSchema, ...errorResponses },
      },
    }, async (request, reply) => {
      if (request.playground!.claimedAt) throw new HookError(PLAYGROUND_ALREADY_CLAIMED);
      let apiKey = '';
      const account = await request.em.transactional(async (em) => {
        const now = new Date();
        const claimed = await claimPlaygroundSession(em, hashPlaygroundToken(tokenOf(request)!), now);
        if (!claimed) throw new HookError(PLAYGROUND_ALREADY_CLAIMED);
        const admin = await em.findOneOrFail(Member, { accountId: claimed.accountId, role: 'admin' }, { orderBy: { id: 'asc' } });
        ({ secret: apiKey } = createApiKey(em, { accountId: claimed.accountId, memberId: admin.id, name: 'default', now }));
        return em.findOneOrFail(Account, { id: claimed.accountId });
      });
      return reply.code(201).send({ account: presentAccount(account), api_key: apiKey });
    });

    scopedApi.get('/playground/stream', {
      websocket: true,
      schema: {
        tags: ['playground'],
        summary: 'The playground endpoint\'s events and attempts as they happen (WebSocket; ?token=pgt_…)',
        querystring: Type.Object({ token: Type.Optional(Type.String({ description: 'The playground token' })) }),
        response: { ...errorResponses },
      },
    }, (socket: WebSocket, request) => {
      const { accountId, endpointId } = request.playground!;
      const stopKeepAlive = keepAlive(socket, heartbeatIntervalMs);
      const send = (message: object): void => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
      };
      const unsubscribe = options.hub.subscribe({
        accountId,
        onEvent: (event) => {
          if (event.endpointId === endpointId) send({ type: 'event.received', event: presentPlaygroundEvent(event) });
        },
        onAttempt: (finished) => {
          if (finished.endpointId === endpointId) send({ type: 'attempt.finished', event_id: finished.eventId, event_status: finished.eventStatus, attempt: finished.attempt });
        },
      });
      socket.on('close', () => {
        stopKeepAlive();
        unsubscribe();
      });
      send({ type: 'hello', endpoint_id: endpointId });
    });
  });
}

