export * from './verify-webhook.ts';
export * from './api-types.ts';
export * from './api-errors.ts';
export * from './rest-client.ts';
export * from './stream.ts';
export * from './backoff.ts';
