/**
 * The relay's entry point (`npm start` runs it through scripts/start.mjs, which checks
 * the Node version first, since an old Node cannot even load this file): reads the environment, starts the embedded
 * PostgreSQL unless HOOK_DATABASE_URL is set, migrates, listens, and shuts down in
 * order on SIGINT/SIGTERM (stop taking requests, commit what was accepted, close the
 * database).
 */
import { createOrm, migrateToLatest, prepareSigningSecrets, startEmbeddedPostgres, type EmbeddedPostgres, type Orm } from '@hook/db';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { relayLoggerOptions } from './logging.ts';
import { loadOrCreateSecretKey } from './secret-key-file.ts';

function fail(message: string, exitCode = 1): never {
  process.stderr.write(`hook relay: ${message}\n`);
  process.exit(exitCode);
}

let config;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) fail(`${error.message} See docs/configuration.md.`, 2);
  throw error;
}

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

let embedded: EmbeddedPostgres | undefined;
let orm: Orm | undefined;
let app: FastifyInstance | undefined;
let stopping: Promise<void> | undefined;

async function shutdown(signal: string): Promise<void> {
  stopping ??= (async () => {
    process.stderr.write(`hook relay: ${signal} received, shutting down\n`);
    // New connections are refused from now on (a load balancer moves on at once); open
    // ones, such as a body still uploading, are answered within app.close(), which then
    // stops the worker and the jobs in order (buildApp).
    if (app?.server.listening) app.server.close(() => undefined);
    await app?.close();
    await orm?.close();
    await embedded?.stop();
  })();
  await stopping;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    shutdown(signal).then(
      () => process.exit(0),
      (error: unknown) => fail(`shutdown failed: ${String(error)}`),
    );
  });
}

try {
  let databaseUrl = config.databaseUrl;
  // loadConfig has refused an external database without HOOK_SECRET_KEY; the embedded one keeps its key in the data dir.
  let secretKey = config.secretKey;
  if (!databaseUrl) {
    if (!secretKey) {
      const keyFile = await loadOrCreateSecretKey(config.dataDir);
      if (keyFile.created) process.stderr.write(`hook relay: generated the key that encrypts signing secrets in ${keyFile.path} (back it up with the data dir)\n`);
      secretKey = keyFile.key;
    }
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: (line) => process.stderr.write(`hook relay: ${line}\n`) });
    databaseUrl = embedded.url;
  }
  orm = await createOrm({ databaseUrl, secretKey });
  const applied = await migrateToLatest(orm);
  if (applied.length > 0) process.stderr.write(`hook relay: applied migrations ${applied.join(', ')}\n`);
  // Refuses a key that cannot open the stored secrets, and encrypts any stored before encryption.
  const sealed = await prepareSigningSecrets(orm);
  if (sealed > 0) process.stderr.write(`hook relay: encrypted the signing secrets of ${sealed} destinations stored in plaintext\n`);
  // The app owns the rest of the process: its delivery worker and background jobs start when it is ready (listen) and stop when it closes.
  app = await buildApp({ config, orm, databaseUrl, logger: relayLoggerOptions(config.logLevel, process.stderr) });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const baseUrl = config.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  say(`Hook relay listening on ${baseUrl}`);
  say(embedded ? `Database: embedded PostgreSQL on 127.0.0.1:${embedded.port} (data in ${embedded.clusterDir})` : 'Database: HOOK_DATABASE_URL');
  if (config.role === 'worker') {
    say(`Role: delivery worker only (HOOK_ROLE=worker); health at ${baseUrl}/healthz`);
  } else {
    if (config.role === 'api') say('Role: API only (HOOK_ROLE=api); another process delivers');
    say(`Get an API key: curl -X POST ${baseUrl}/v1/accounts`);
    say(`API description: ${baseUrl}/openapi.json`);
  }
} catch (error) {
  await shutdown('start-up failure').catch(() => undefined);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') fail(`port ${config.port} on ${config.host} is already in use. Set HOOK_PORT to a free port (0 picks one).`);
  fail(`could not start: ${error instanceof Error ? error.message : String(error)}`);
}
