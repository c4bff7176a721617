import type { Static } from 'typebox';
import { HANDSHAKE_SECRET_PROVIDERS, HookError, VALIDATION_FAILED, type HandshakeSettings } from '@hook/core';
import { sealSigningSecret, type SecretBoxOwner } from '@hook/db';
import type { HandshakeInput } from '../../schemas.ts';

/** An endpoint's handshake as given to the API, checked and split into the settings and the sealed secret. */
export function handshakeColumns(owner: SecretBoxOwner, input: NonNullable<Static<typeof HandshakeInput>>): { handshake: HandshakeSettings; handshakeSecret: string | null } {
  const needsSecret = HANDSHAKE_SECRET_PROVIDERS.includes(input.provider);
  const problem = needsSecret && input.secret === undefined
    ? `is required for provider '${input.provider}': ${input.provider === 'meta' ? 'the verify token you give Meta' : input.provider === 'zoom' ? "the app's secret token" : 'the app\'s consumer secret'}`
    : !needsSecret && input.secret !== undefined ? `is for providers ${HANDSHAKE_SECRET_PROVIDERS.join(', ')} only; '${input.provider}' needs none` : null;
  if (problem) {
    const errors = [{ field: 'body.handshake.secret', message: problem }];
    throw new HookError(VALIDATION_FAILED, [1, `body.handshake.secret ${problem}`], errors);
  }
  return {
    handshake: { provider: input.provider, ...(input.secret !== undefined ? { secret_hint: input.secret.slice(-4) } : {}) },
    handshakeSecret: input.secret === undefined ? null : sealSigningSecret(owner, input.secret),
  };
}

/** An endpoint's handshake as the API shows it: never the secret. */
export function presentHandshake(settings: HandshakeSettings | null | undefined) {
  if (!settings) return null;
  return { provider: settings.provider, secret_set: settings.secret_hint !== undefined, secret_hint: settings.secret_hint ?? null };
}
