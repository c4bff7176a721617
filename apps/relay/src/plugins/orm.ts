import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { EntityManager } from '@mikro-orm/postgresql';
import { HookError } from '@hook/core';
import type { Orm, ReadReplicas, ReadTarget } from '@hook/db';

declare module 'fastify' {
  interface FastifyInstance {
    orm: Orm;
  }
  interface FastifyRequest {
    /** This request's own EntityManager fork, made on first use. */
    readonly em: EntityManager;
    /**
     * The EntityManager for this request's reads that tolerate a little lag: a read
     * replica's in routes with `config: { lagTolerantReads: true }` when one is caught up
     * (docs/deployment.md#read-replicas), else `em`. Existence checks of what the caller
     * names by id stay on `em`: a resource just created is never reported missing.
     */
    readonly readEm: EntityManager;
  }
  interface FastifyContextConfig {
    /** The route only reads, and its reads may lag the primary (lists, search, usage): `request.readEm` may be a replica's. */
    lagTolerantReads?: boolean;
  }
}

/** Methods that change nothing: any other request of an account is a write it must read back. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface RegisterOrmOptions {
  /** The read replicas (HOOK_DATABASE_READ_URL), when there are any. */
  reads?: ReadReplicas | null;
  /** Told where each lag-tolerant request's reads went: a replica's name, or the primary and why. */
  onLagTolerantRead?: (target: ReadTarget) => void;
}

const forks = new WeakMap<object, EntityManager>();

/**
 * Gives the app its ORM and every request a fork of the EntityManager; with read
 * replicas, lag-tolerant routes a replica's too (readEm), written accounts are noted
 * when their answer is sent, and a lag-tolerant route whose replica fails mid-request
 * runs again on the primary (it only reads, so running it twice changes nothing).
 */
export function registerOrm(app: FastifyInstance, orm: Orm, { reads, onLagTolerantRead }: RegisterOrmOptions = {}): void {
  app.decorate('orm', orm);
  app.decorateRequest('em', {
    getter(this: object) {
      let em = forks.get(this);
      if (!em) {
        em = orm.em.fork() as EntityManager;
        forks.set(this, em);
      }
      return em;
    },
  });
  const targets = new WeakMap<object, ReadTarget>();
  app.decorateRequest('readEm', {
    getter(this: FastifyRequest) {
      if (!reads || !this.routeOptions.config.lagTolerantReads) return this.em;
      let target = targets.get(this);
      if (!target) {
        target = reads.route(this.accountId || undefined);
        targets.set(this, target);
      }
      return target.replica === null ? this.em : target.em;
    },
  });
  if (!reads) return;

  // onSend runs after the handler's transactions committed and before the client can
  // have the answer, so its next read already knows of the write.
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (!READ_METHODS.has(request.method) && request.accountId) reads.noteWrite(request.accountId);
    done(null, payload);
  });

  app.addHook('onRoute', (route) => {
    if (!route.config?.lagTolerantReads) return;
    const handler = route.handler as (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => unknown;
    route.handler = async function readOnPrimaryIfTheReplicaFails(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      try {
        return await handler.call(this, request, reply);
      } catch (error) {
        const target = targets.get(request);
        // Answers the handler chose (not found, invalid filter) are answers, not failures of the replica.
        if (!target || target.replica === null || error instanceof HookError || reply.sent) throw error;
        request.log.warn({ err: error, replica: target.replica }, 'a read on a replica failed: answering from the primary');
        reads.readFailed(target.replica, error);
        targets.set(request, { replica: null, reason: 'replica_failed' });
        return await handler.call(this, request, reply);
      } finally {
        const target = targets.get(request);
        if (target) onLagTolerantRead?.(target);
      }
    } as RouteHandlerMethod;
  });
}
