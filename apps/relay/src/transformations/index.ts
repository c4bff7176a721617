export * from './types.ts';
export { createTransformRunner, lineFromStack, QuickJsTransformRunner, MAX_LOG_LINES, MAX_LOG_LINE_BYTES, MAX_RESULT_BYTES, type TransformRunnerOptions } from './runner.ts';
export { TransformPool, type TransformPoolOptions } from './pool.ts';
export { TransformationMeter } from './meter.ts';
