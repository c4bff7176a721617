import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { HookError, signingPublicKey, validateFilter, VALIDATION_FAILED, type FieldError } from '@hook/core';
import { openSigningSecret, type SecretBoxOwner } from '@hook/db';
import { checkDestinationTarget } from '../destinations/options.ts';
import { TRANSFORMATION_CODE_MAX_BYTES, type Destination, type FilterInput, type TransformationInput } from '../../schemas.ts';

/** Refuses a destination whose fields are not its type's, or whose URL cannot be parsed or is at a private address (unless this relay allows them). */
export async function checkDestination(destination: Static<typeof Destination> | undefined, allowPrivate: boolean): Promise<void> {
  await checkDestinationTarget(destination, allowPrivate);
}

/**
 * Checks a transformation (it compiles and registers a transform handler) and a filter
 * (docs/filters.md) before they are stored; problems come back as one validation_failed.
 */
export async function checkRules(app: FastifyInstance, body: { transformation?: Static<typeof TransformationInput>; filter?: Static<typeof FilterInput> }): Promise<void> {
  const errors: FieldError[] = [];
  if (body.transformation) {
    const { code } = body.transformation;
    if (Buffer.byteLength(code, 'utf8') > TRANSFORMATION_CODE_MAX_BYTES) {
      errors.push({ field: 'body.transformation.code', message: `is ${Buffer.byteLength(code, 'utf8')} bytes; at most ${TRANSFORMATION_CODE_MAX_BYTES} (64 KiB)` });
    } else {
      const problem = await app.transformRunner.check(code);
      if (problem) errors.push({ field: 'body.transformation.code', message: problem.line === null ? problem.message : `line ${problem.line}: ${problem.message}` });
    }
  }
  if (body.filter) errors.push(...validateFilter(body.filter, 'body.filter'));
  if (errors.length > 0) throw new HookError(VALIDATION_FAILED, [errors.length, errors.map((error) => `${error.field} ${error.message}`).join('; ')], errors);
}

type SecretRow = { secret: string; previousSecret?: string | null; previousSecretExpiresAt?: Date | null };

/** The secrets that sign deliveries now, decrypted: the rotated-out one only until its grace period ends. */
export function presentSecret(em: SecretBoxOwner, destination: SecretRow, now: Date) {
  const previousLive = Boolean(destination.previousSecret && destination.previousSecretExpiresAt && destination.previousSecretExpiresAt > now);
  const secret = openSigningSecret(em, destination.secret);
  const previous = previousLive ? openSigningSecret(em, destination.previousSecret!) : null;
  return {
    secret,
    previous_secret: previous,
    previous_secret_expires_at: previousLive ? destination.previousSecretExpiresAt!.toISOString() : null,
    public_key: signingPublicKey(secret),
    previous_public_key: previous === null ? null : signingPublicKey(previous),
  };
}
