import type { Static } from 'typebox';
import { HookError, RESPONSE_MAX_BODY_BYTES, responseHeaderProblems, VALIDATION_FAILED, type EndpointResponse, type FieldError } from '@hook/core';
import type { ResponseInput } from '../../schemas.ts';

/**
 * An endpoint's custom response as given to the API, checked (headers bounded, the body's
 * UTF-8 size) and stored with header names lower-cased. Problems come back as one
 * validation_failed naming each field.
 */
export function responseColumn(input: NonNullable<Static<typeof ResponseInput>>): EndpointResponse {
  const errors: FieldError[] = [];
  const headers = input.headers ?? {};
  for (const [name, message] of responseHeaderProblems(headers)) errors.push({ field: name === '' ? 'body.response.headers' : `body.response.headers.${name}`, message });
  const body = input.body ?? '';
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > RESPONSE_MAX_BODY_BYTES) errors.push({ field: 'body.response.body', message: `is ${bytes} bytes; at most ${RESPONSE_MAX_BODY_BYTES}` });
  if (errors.length > 0) throw new HookError(VALIDATION_FAILED, [errors.length, errors.map((error) => `${error.field} ${error.message}`).join('; ')], errors);
  return {
    status: input.status ?? 200,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    body,
  };
}
