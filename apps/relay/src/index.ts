export { buildApp, leaseMsFor, type BuildAppOptions } from './app.ts';
export { DeliveryWorker, type DeliveryWorkerOptions } from './delivery/worker.ts';
export { ConfigError, loadConfig, type RelayConfig } from './config.ts';
export { LISTEN_SESSION_CHANNEL, type ListenSessionSignal } from './stream/listen-session.ts';
