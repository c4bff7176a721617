/**
 * The REST API's JSON, defined once (docs/api.md, Schemas): the relay validates requests and
 * serialises responses with these and generates /openapi.json from them, @hook/client's
 * types are their `Static`, and the MCP tools' output schemas are made from them. A field is
 * added here and nowhere else.
 */
export type { Static, TObject, TOptional, TProperties, TSchema, TUnknown } from 'typebox';
export * from './common.ts';
export * from './account.ts';
export * from './endpoint.ts';
export * from './event.ts';
export * from './transformation.ts';
export * from './issue.ts';
export * from './alerts.ts';
