export { buildApp, type BuildAppOptions } from './app.ts';
export { ConfigError, loadConfig, type RelayConfig } from './config.ts';
