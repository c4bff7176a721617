import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { HookError, STORAGE_UNAVAILABLE, type FieldError } from '@hook/core';
import { pendingMigrations, type Orm } from '@hook/db';
import { sendProblem } from '../../plugins/errors.ts';
import { errorResponses } from '../../schemas.ts';

/** How long the readiness checks may take before the probe answers 503: a probe must answer even when the database hangs. */
export const READINESS_TIMEOUT_MS = 2000;

/** Runs a check; a failure (or no answer within READINESS_TIMEOUT_MS) becomes the message saying why. */
async function check<T>(run: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; message: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READINESS_TIMEOUT_MS} ms`)), READINESS_TIMEOUT_MS);
  });
  try {
    return { ok: true, value: await Promise.race([run(), timeout]) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /healthz`: 200 while the process runs and answers (liveness: restart it if not).
 * `GET /readyz`: 200 when the database answers and has every migration this code ships
 * (readiness: send it traffic), else 503 storage_unavailable naming the failed check.
 */
export async function healthRoutes(app: FastifyInstance, options: { orm: Orm }): Promise<void> {
  app.get('/healthz', {
    schema: {
      tags: ['ops'],
      summary: 'Liveness: the process is up (the database is not checked; see /readyz)',
      response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses },
    },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    schema: {
      tags: ['ops'],
      summary: 'Readiness: the database is reachable and every migration is applied',
      description: 'A 503 storage_unavailable problem lists each failed check in errors[] (field "database" or "migrations").',
      response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses },
    },
  }, async (request, reply) => {
    const failed: FieldError[] = [];
    const pending = await check(() => pendingMigrations(options.orm));
    if (!pending.ok) {
      // The database's own words (host, database name) go to the log, not to an unauthenticated caller.
      request.log.warn({ reason: pending.message }, 'readiness: database unreachable');
      failed.push({ field: 'database', message: 'unreachable (the reason is in the relay\'s log)' });
    } else if (pending.value.length > 0) failed.push({ field: 'migrations', message: `not applied: ${pending.value.join(', ')} (starting this relay version applies them)` });
    if (failed.length === 0) return { status: 'ok' as const };
    const problem = new HookError(STORAGE_UNAVAILABLE, [], failed);
    problem.message = `Not ready: ${failed.map((failure) => `${failure.field} ${failure.message}`).join('; ')}`;
    return sendProblem(reply, problem);
  });
}
