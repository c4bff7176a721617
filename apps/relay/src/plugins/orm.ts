import type { FastifyInstance } from 'fastify';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '@hook/db';

declare module 'fastify' {
  interface FastifyInstance {
    orm: Orm;
  }
  interface FastifyRequest {
    /** This request's own EntityManager fork, made on first use. */
    readonly em: EntityManager;
  }
}

const forks = new WeakMap<object, EntityManager>();

/** Gives the app its ORM and every request a fork of the EntityManager. */
export function registerOrm(app: FastifyInstance, orm: Orm): void {
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
}
