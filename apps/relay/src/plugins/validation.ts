import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { HookError, MALFORMED_JSON } from '@hook/core';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

function makeAjv(options: AjvOptions): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Bodies are validated strictly: a wrong type is an error, never coerced, and an
 * unknown field is an error, never silently dropped (Fastify's defaults do both).
 * Query strings and path params arrive as text, so there numbers are coerced.
 */
export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv({ coerceTypes: false });
  const textAjv = makeAjv({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));

  // A request that has no body validates as `{}`: optional-body routes then accept it, and
  // required fields are reported by name instead of "body must be object".
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    done();
  });

  // JSON bodies: an empty body counts as no body (so POST routes whose body is optional
  // take `curl -X POST -H 'content-type: application/json'`), and __proto__ keys are refused.
  // Only JSON is spoken here: text/plain gets 415 rather than reaching validation as a string.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(/^application\/(.+\+)?json(;.*)?$/i, { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      done(new HookError(MALFORMED_JSON, [(error as Error).message]), undefined);
    }
  });
}
