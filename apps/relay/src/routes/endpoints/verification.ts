import type { Static } from 'typebox';
import { checkVerificationSecret, DEFAULT_TOLERANCE_SECONDS, HookError, VALIDATION_FAILED, type FieldError, type VerificationSettings } from '@hook/core';
import { sealSigningSecret, type SecretBoxOwner } from '@hook/db';
import type { VerificationInput } from '../../schemas.ts';

/** Fields only the generic `hmac` provider takes. */
const HMAC_ONLY = ['header', 'algorithm', 'encoding', 'prefix', 'signed', 'timestamp_header'] as const;

/**
 * An endpoint's verification as given to the API, checked and split into the settings
 * stored in the clear and the secret stored sealed. Problems come back as one
 * validation_failed naming each field.
 */
export function verificationColumns(owner: SecretBoxOwner, input: NonNullable<Static<typeof VerificationInput>>): { verification: VerificationSettings; verificationSecret: string } {
  const errors: FieldError[] = [];
  const secretProblem = checkVerificationSecret(input.provider, input.secret);
  if (secretProblem) errors.push({ field: 'body.verification.secret', message: secretProblem });
  if (input.provider === 'hmac') {
    if (input.header === undefined) errors.push({ field: 'body.verification.header', message: "is required for provider 'hmac': the header the sender puts its signature in" });
    if (input.signed === 'timestamp.body' && input.timestamp_header === undefined) {
      errors.push({ field: 'body.verification.timestamp_header', message: "is required when signed is 'timestamp.body': the header the sender puts its Unix timestamp in" });
    }
  } else {
    for (const field of HMAC_ONLY) if (input[field] !== undefined) errors.push({ field: `body.verification.${field}`, message: `is for provider 'hmac' only; '${input.provider}' follows its published scheme` });
  }
  if (errors.length > 0) throw new HookError(VALIDATION_FAILED, [errors.length, errors.map((error) => `${error.field} ${error.message}`).join('; ')], errors);
  const verification: VerificationSettings = {
    provider: input.provider,
    mode: input.mode ?? 'reject',
    tolerance_seconds: input.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS,
    ...(input.provider === 'hmac'
      ? {
        header: input.header!.toLowerCase(),
        algorithm: input.algorithm ?? 'sha256',
        encoding: input.encoding ?? 'hex',
        prefix: input.prefix ?? '',
        signed: input.signed ?? 'body',
        ...(input.signed === 'timestamp.body' ? { timestamp_header: input.timestamp_header!.toLowerCase() } : {}),
      }
      : {}),
    secret_hint: input.secret.slice(-4),
  };
  return { verification, verificationSecret: sealSigningSecret(owner, input.secret) };
}

/** An endpoint's verification as the API shows it: the settings, never the secret. */
export function presentVerification(settings: VerificationSettings | null | undefined) {
  if (!settings) return null;
  const { secret_hint: hint, ...shown } = settings;
  return { ...shown, secret_set: true as const, secret_hint: hint ?? '' };
}
