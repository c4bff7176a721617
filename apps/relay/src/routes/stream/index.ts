import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { WebSocket } from 'ws';
import {
  ENDPOINT_NOT_FOUND, EVENT_TYPE_MAX_CHARS, HookError, INVALID_API_KEY, STREAM_CLOSE_CODES, STREAM_DEFAULT_MAX_IN_FLIGHT, STREAM_EVENT_TYPES_MAX, STREAM_HEARTBEAT_INTERVAL_MS, STREAM_MAX_IN_FLIGHT_LIMIT, STREAM_NEEDS_ENDPOINT, STREAM_NEEDS_WEBSOCKET,
} from '@hook/core';
import { Destination, Endpoint, type Orm } from '@hook/db';
import type { AttemptContext } from '../../delivery/attempt.ts';
import { EventStatus as EventStatusSchema, errorResponses, IdOf } from '../../schemas.ts';
import { publicBaseUrl } from '../endpoints/present.ts';
import type { StreamHub } from '../../stream/hub.ts';
import { ListenSession, type ListenEndpoint } from '../../stream/listen-session.ts';
import type { ListenerRegistry } from '../../stream/listeners.ts';
import { closeWithError, keepAlive } from '../../stream/socket.ts';
import { TailSession } from '../../stream/tail-session.ts';

const StreamQuery = Type.Object({
  mode: Type.Optional(Type.Union([Type.Literal('tail'), Type.Literal('listen')], { default: 'tail', description: 'tail: watch events and attempts; listen: receive deliveries and answer them' })),
  endpoint_id: Type.Optional(IdOf('endpoint', 'listen: the endpoint to receive; tail: only this endpoint')),
  status: Type.Optional(EventStatusSchema),
  skip_missed: Type.Optional(Type.Boolean({ default: false, description: 'listen: only events received from now on' })),
  max_in_flight: Type.Optional(Type.Integer({ minimum: 1, maximum: STREAM_MAX_IN_FLIGHT_LIMIT, default: STREAM_DEFAULT_MAX_IN_FLIGHT })),
  types: Type.Optional(Type.String({
    minLength: 1,
    pattern: `^[^,]{1,${EVENT_TYPE_MAX_CHARS}}(,[^,]{1,${EVENT_TYPE_MAX_CHARS}}){0,${STREAM_EVENT_TYPES_MAX - 1}}$`,
    description: `listen: only events of these types, comma-separated (at most ${STREAM_EVENT_TYPES_MAX}); the others wait for a listener that takes them`,
  })),
  batch: Type.Optional(Type.Boolean({ default: false, description: 'listen: the client takes batch messages (several messages in one frame) and may send them; hello says batch: true when the relay speaks them' })),
});
type StreamQuery = Static<typeof StreamQuery>;

export interface StreamRouteOptions {
  orm: Orm;
  /** What a listen session's attempts need (the app's, as the worker's). */
  delivery: AttemptContext;
  hub: StreamHub;
  listeners: ListenerRegistry;
  leaseMs: number;
  /** Base of the ingest URLs shown: HOOK_INGEST_URL, else HOOK_PUBLIC_URL; unset, each request's own. */
  ingestBaseUrl: string | undefined;
  heartbeatIntervalMs?: number;
  /** How often a listen session looks for due retries and events other processes stored. */
  listenPollIntervalMs?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The endpoint a listen-mode stream request is for, found before the upgrade. */
    listenEndpoint: ListenEndpoint | null;
  }
}

/**
 * `GET /v1/stream`: the live stream (WebSocket; protocol in packages/core/src/stream-protocol.ts).
 * Everything that can be refused is refused before the upgrade, as an ordinary problem
 * document: the key (by the auth hook), the query, and in listen mode the endpoint.
 */
export async function streamRoutes(app: FastifyInstance, options: StreamRouteOptions): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? STREAM_HEARTBEAT_INTERVAL_MS;
  app.decorateRequest('listenEndpoint', null);

  async function findListenEndpoint(request: FastifyRequest<{ Querystring: StreamQuery }>): Promise<void> {
    if (!request.ws) throw new HookError(STREAM_NEEDS_WEBSOCKET);
    const { mode, endpoint_id: endpointId } = request.query;
    if (mode !== 'listen' && !endpointId) return;
    if (!endpointId) throw new HookError(STREAM_NEEDS_ENDPOINT);
    const endpoint = await request.em.findOne(Endpoint, { id: endpointId, accountId: request.accountId, kind: 'user', deletedAt: null });
    if (!endpoint) throw new HookError(ENDPOINT_NOT_FOUND, [endpointId]);
    request.listenEndpoint = {
      id: endpoint.id,
      accountId: endpoint.accountId,
      name: endpoint.name,
      url: `${publicBaseUrl(request, options.ingestBaseUrl)}/v1/ingest/${endpoint.ingestId}`,
      destinationId: (await request.em.findOne(Destination, { endpointId: endpoint.id, accountId: endpoint.accountId, type: 'cli', deletedAt: null }, { orderBy: { position: 'asc' } }))?.id ?? null,
    };
  }

  api.get('/v1/stream', {
    websocket: true,
    schema: {
      tags: ['stream'],
      summary: 'Live stream (WebSocket): tail events and attempts, or listen for deliveries (hook listen)',
      description: 'Upgrade to a WebSocket with Authorization: Bearer <key>. Messages are JSON with type and version; see docs/api.md#live-stream.',
      security: [{ bearerAuth: [] }],
      querystring: StreamQuery,
      response: { ...errorResponses },
    },
    preHandler: findListenEndpoint,
  }, (socket, request) => {
    const stopKeepAlive = keepAlive(socket, heartbeatIntervalMs);
    const stopKeyCheck = closeWhenKeyRevoked(options.orm, socket, request, heartbeatIntervalMs);
    socket.on('close', () => {
      stopKeepAlive();
      stopKeyCheck();
    });
    const query = request.query as StreamQuery;
    if (query.mode === 'listen') {
      const session = new ListenSession({
        socket,
        orm: options.orm,
        hub: options.hub,
        listeners: options.listeners,
        delivery: options.delivery,
        endpoint: request.listenEndpoint!,
        maxInFlight: query.max_in_flight ?? STREAM_DEFAULT_MAX_IN_FLIGHT,
        skipMissed: query.skip_missed ?? false,
        eventTypes: query.types === undefined ? null : [...new Set(query.types.split(',').map((type) => type.trim()).filter(Boolean))],
        leaseMs: options.leaseMs,
        heartbeatIntervalMs,
        pollIntervalMs: options.listenPollIntervalMs ?? 1000,
        batches: query.batch ?? false,
        onError: (error) => request.log.error({ err: error }, 'listen session error'),
      });
      session.start().catch((error: unknown) => {
        request.log.error({ err: error }, 'listen session failed to start');
        socket.close(1011, 'internal error');
      });
      return;
    }
    new TailSession({
      socket, hub: options.hub, accountId: request.accountId, endpointId: query.endpoint_id, status: query.status, heartbeatIntervalMs,
      orm: options.orm,
      onError: (error) => request.log.error({ err: error }, 'tail session error'),
    }).start();
  });
}

/**
 * A stream lives as long as its key: every heartbeat the key (or the console session,
 * which goes with its key) is looked up, and a stream whose key was revoked (or whose
 * member or account was removed, or whose console session ended) is closed with
 * `keyRevoked`, which clients treat as final. Returns the function that stops checking.
 */
function closeWhenKeyRevoked(orm: Orm, socket: WebSocket, request: FastifyRequest, intervalMs: number): () => void {
  const { keyId, consoleSession } = request.caller;
  // A console stream (cookie) also ends when its session does: signed out or expired.
  const stillValid = consoleSession === undefined
    ? ['select id from api_key where id = ?', [keyId]] as const
    : ['select key_id as id from console_session where token_hash = ? and expires_at > now()', [consoleSession]] as const;
  const timer = setInterval(() => {
    orm.em.fork().getConnection().execute<{ id: string }[]>(stillValid[0], [...stillValid[1]])
      .then((rows) => {
        if (rows.length === 0) closeWithError(socket, STREAM_CLOSE_CODES.keyRevoked, new HookError(INVALID_API_KEY));
      })
      .catch((error: unknown) => request.log.warn({ err: error }, 'could not check a stream\'s API key'));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
