export * from './ids.ts';
export * from './secrets.ts';
export * from './signing.ts';
export * from './errors.ts';
export * from './events.ts';
export * from './pagination.ts';
export * from './plans.ts';
export * from './delivery.ts';
