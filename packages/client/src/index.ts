export * from './verify-webhook.ts';
