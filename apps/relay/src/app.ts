import { Resolver } from 'node:dns/promises';
import { createServer } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { HookError, isPlan, newUlid, PLAN_LIMITS, SERVICE_UNAVAILABLE, STREAM_CLOSE_CODES } from '@hook/core';
import websocket from '@fastify/websocket';
import { Account, AttemptRecorder, EventWriter, ReadReplicas, recordTransformationThrottled, type Orm } from '@hook/db';
import type { RelayConfig } from './config.ts';
import { type AttemptContext } from './delivery/attempt.ts';
import { DeliverySender } from './delivery/sender.ts';
import { QueuePublisher } from './delivery/queues/index.ts';
import { DeliveryWorker } from './delivery/worker.ts';
import { requireApiKey } from './plugins/auth.ts';
import { CallerAddresses, fastifyTrustProxy, requireAllowedAddress } from './plugins/ip-allowlist.ts';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './plugins/errors.ts';
import { registerOpenApi } from './plugins/openapi.ts';
import { logRequests } from './logging.ts';
import { metricsRoutes, RelayMetrics } from './plugins/metrics.ts';
import { registerOrm } from './plugins/orm.ts';
import { limitApiRequests, registerRateLimit } from './plugins/rate-limit.ts';
import { registerValidation } from './plugins/validation.ts';
import { ingestHostOf, keepIngestHostsApart } from './plugins/tenant-content.ts';
import { accountRoutes, accountSignupRoutes } from './routes/accounts/index.ts';
import { accountSettingsRoutes } from './routes/accounts/settings.ts';
import { customDomainRoutes } from './routes/accounts/custom-domain.ts';
import { accountDeletionRoutes } from './routes/accounts/deletion.ts';
import { dailyUsageRoutes } from './routes/accounts/daily-usage.ts';
import { apiKeyRoutes } from './routes/api-keys/index.ts';
import { destinationRoutes } from './routes/destinations/index.ts';
import { endpointRoutes } from './routes/endpoints/index.ts';
import { eventRoutes } from './routes/events/index.ts';
import { issueRoutes } from './routes/issues/index.ts';
import { healthRoutes } from './routes/health/index.ts';
import { ingestRoutes } from './routes/ingest/index.ts';
import { memberRoutes } from './routes/members/index.ts';
import { IngestTargetCache } from './routes/ingest/target-cache.ts';
import { CustomDomainCache } from './routes/ingest/custom-domains.ts';
import { DirectIngest } from './routes/ingest/direct.ts';
import { IngestReceiver } from './routes/ingest/receive.ts';
import { mcpRoutes, refuseForeignMcpOrigins } from './routes/mcp/index.ts';
import { notificationRoutes } from './routes/notifications/index.ts';
import { playgroundRoutes } from './routes/playground/index.ts';
import { consolePages } from './routes/console/pages.ts';
import { consoleSessionRoutes } from './routes/console/session.ts';
import { landingRoutes } from './routes/landing/index.ts';
import { siteAssets } from './routes/site-assets.ts';
import { PERIODIC_STOP_GRACE_MS, settlesWithin, type Periodic } from './jobs/periodic.ts';
import { startPlaygroundExpiry } from './jobs/playground-expiry.ts';
import { startRetention } from './jobs/retention.ts';
import { startNotifier } from './jobs/notifier.ts';
import { startAlertSender } from './jobs/alert-sender.ts';
import { EmailSender } from './alerts/email.ts';
import { SlackPoster } from './alerts/slack.ts';
import { alertRoutes } from './routes/alerts/index.ts';
import { startOrderingSweep } from './jobs/ordering-sweep.ts';
import { startIssueSweep } from './jobs/issue-sweep.ts';
import { streamRoutes } from './routes/stream/index.ts';
import { copyUrlDelivery } from './stream/copies.ts';
import { ListenerRegistry } from './stream/listeners.ts';
import { transformationRoutes } from './routes/transformations/index.ts';
import { StreamHub } from './stream/hub.ts';
import { StreamPeerLink } from './stream/peers.ts';
import { TransformationMeter, TransformPool } from './transformations/index.ts';

/** Bytes a JSON API request body may have (the ingest limit is HOOK_MAX_PAYLOAD). */
const API_BODY_LIMIT_BYTES = 1024 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    /** What a delivery attempt needs, shared by replay routes, listen sessions and the delivery worker. */
    delivery: AttemptContext;
    /** This process's delivery worker (started when the app is ready, stopped when it closes); null when it does not deliver (HOOK_ROLE=api, or BuildAppOptions.worker false). */
    deliveryWorker: DeliveryWorker | null;
    /** This process's transformation threads (docs/transformations.md), for delivery, the rule checks and the test route. */
    transformRunner: TransformPool;
  }
}

/** How long a delivery claim holds: an attempt's time limit twice over, plus a second. */
export function leaseMsFor(config: RelayConfig): number {
  return config.deliveryTimeoutMs * 2 + 1000;
}

export interface BuildAppOptions {
  config: RelayConfig;
  orm: Orm;
  /** Fastify's logger option; false (the default) for silence. */
  logger?: FastifyServerOptions['logger'];
  /** How often the live stream pings its clients (tests shorten it). Default STREAM_HEARTBEAT_INTERVAL_MS. */
  streamHeartbeatIntervalMs?: number;
  /** The database's URL, for the connections that LISTEN: the delivery worker's, and the live stream's link to other relay processes (stream/peers.ts). Default config.databaseUrl. */
  databaseUrl?: string;
  /** Share the live stream with other relay processes on the database (stream/peers.ts). Default true; without it tails see this process only. */
  streamPeers?: boolean;
  /**
   * This process's delivery worker (roles other than api): how often it polls for due
   * deliveries (default 1 s) and refreshes the queue's statistics (default 30 s). False:
   * none (tests that look at the queue undelivered).
   */
  worker?: false | { pollIntervalMs?: number; statisticsIntervalMs?: number };
  /** How long closing waits for each background job's pass in progress (default PERIODIC_STOP_GRACE_MS, jobs/periodic.ts). */
  jobStopGraceMs?: number;
  /** How often a `hook listen` session reads its endpoint's backlog when nothing woke it (tests lengthen it). Default 1 s. */
  listenPollIntervalMs?: number;
  /** Resolves destination names for delivery instead of the system's dns.lookup (tests play DNS answers with it). */
  resolveDestination?: ConstructorParameters<typeof DeliverySender>[0]['resolve'];
}

/** The resolver custom domains are verified through: HOOK_DNS_SERVERS, else the system's; each server gets two tries, the first of 2 s, so an unanswered lookup ends within seconds. */
function dnsResolver(servers: string[] | null): Resolver {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (servers) resolver.setServers(servers);
  return resolver;
}

/**
 * The relay's process: its HTTP app, ready for `inject` or `listen` (it never listens by
 * itself), and everything else it runs. When the app is ready, the delivery worker and
 * the background jobs start; when it closes, everything stops in order: new requests are
 * refused and those under way answered (Fastify), the worker stops claiming and its
 * deliveries in flight end and are recorded, accepted events are committed, the jobs stop
 * (each waited for within its grace), then the connections out, the transformation
 * threads, the live-stream link and tracing close. The ORM is the caller's to close after.
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, orm, logger = false, streamHeartbeatIntervalMs, listenPollIntervalMs, resolveDestination, jobStopGraceMs } = options;
  const databaseUrl = options.databaseUrl ?? config.databaseUrl;
  // Ingest requests go past Fastify when they can (routes/ingest/direct.ts); set once ingest is registered.
  let directIngest: DirectIngest | null = null;
  const app = Fastify({
    // Fastify's own server (lib/server.js, HTTP/1), with ingest's direct path in front of its handler.
    serverFactory: (handler, options) => {
      // the options as Fastify completed them (its defaults in)
      const { keepAliveTimeout, requestTimeout, connectionTimeout, maxRequestsPerSocket } = options as Record<'keepAliveTimeout' | 'requestTimeout' | 'connectionTimeout' | 'maxRequestsPerSocket', number>;
      const server = createServer((request, response) => (directIngest?.serves(request) ? directIngest.serve(request, response) : handler(request, response)));
      server.keepAliveTimeout = keepAliveTimeout;
      server.requestTimeout = requestTimeout;
      server.setTimeout(connectionTimeout);
      if (maxRequestsPerSocket > 0) server.maxRequestsPerSocket = maxRequestsPerSocket;
      return server;
    },
    logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: API_BODY_LIMIT_BYTES,
    genReqId: () => `req_${newUlid()}`,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // While closing, requests on connections still open get a problem+json 503 (below), not Fastify's plain one.
    return503OnClosing: false,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    forceCloseConnections: 'idle',
  });
  // OTEL_* (docs/deployment.md#tracing): the OpenTelemetry SDK is loaded only when tracing is on.
  const tracing = config.tracing
    ? (await import('./tracing.ts')).startTracing(config.tracing, { onExportProblem: (message) => app.log.warn({ otel: message }, 'could not export trace spans') })
    : null;
  // On a PostgreSQL distributed by account, one statement per account of each group commit (docs/scaling.md).
  const distributed = config.databaseDistributed !== null;
  const writer = new EventWriter(orm, {
    distributed,
    ...(tracing ? { traceWrite: tracing.traceWrite } : {}),
    onMissingPartition: ({ retentionClasses, error }) => {
      metrics?.countMissingPartition();
      app.log.warn({ retention_classes: retentionClasses, err: error }, 'ingest found no history partition and made it (partitions are made ahead by the retention job: is a delivering process running?)');
    },
  });
  const targets = new IngestTargetCache(orm);
  // The hosts the relay is configured to answer on: no account's custom domain, ever.
  const ownHosts = [config.publicUrl, config.ingestUrl].filter((url) => url !== undefined).map((url) => new URL(url).hostname);
  const domains = new CustomDomainCache(orm, { ownHosts });
  const callerAddresses = new CallerAddresses();
  const sender = new DeliverySender({ timeoutMs: config.deliveryTimeoutMs, allowPrivateDestinations: config.allowPrivateDestinations, resolve: resolveDestination });
  const queues = new QueuePublisher({ timeoutMs: config.deliveryTimeoutMs, allowPrivateDestinations: config.allowPrivateDestinations, ...(resolveDestination ? { resolve: resolveDestination } : {}) });
  // An endpoint whose every destination was disabled (410, failing) refuses events from now on.
  const recorder = new AttemptRecorder(orm, { distributed, onEndpointsDisabled: (endpointIds) => endpointIds.forEach((id) => targets.invalidateEndpoint(id)) });
  const hub = new StreamHub();
  const listeners = new ListenerRegistry();
  // Counted on a registry of this app's own (HOOK_METRICS=off: nothing is counted or served).
  const metrics = config.metrics ? new RelayMetrics(orm) : undefined;
  // Lag-tolerant reads (lists, search, usage) on streaming replicas; a worker serves none (docs/deployment.md#read-replicas).
  const reads = config.databaseReadUrls.length > 0 && config.role !== 'worker'
    ? await ReadReplicas.connect({
      urls: config.databaseReadUrls,
      primary: orm,
      maxLagMs: config.databaseReadMaxLagMs,
      secretKey: config.secretKey,
      onReplicaChange: ({ replica, up, error }) => {
        if (up) app.log.info({ replica }, 'read replica answering: lag-tolerant reads may use it');
        else app.log.warn({ replica, err: error }, 'read replica not answering as a standby: its reads go to the primary');
      },
    })
    : null;
  if (reads) metrics?.watchReadReplicas(reads);
  const transformMeter = new TransformationMeter(orm, (error) => app.log.warn({ err: error }, 'could not record transformation CPU usage'));
  const transformRunner = new TransformPool({
    timeoutMs: config.transformTimeoutMs,
    memoryBytes: config.transformMemoryBytes,
    threads: config.transformThreads,
    // A delivery's lease outlasts its wait for a thread plus its send (see leaseMsFor).
    maxQueueWaitMs: config.deliveryTimeoutMs,
    allowanceFor: async (accountId) => {
      const account = await orm.em.fork().findOne(Account, { id: accountId }, { fields: ['plan'] });
      return account && isPlan(account.plan) ? PLAN_LIMITS[account.plan].transformationCpuMsPerMinute : null;
    },
    onCpuUsed: (accountId, cpuMs) => {
      transformMeter.add(accountId, cpuMs);
      metrics?.transformationCpuUsed(cpuMs);
    },
    onThrottled: (accountId) => {
      metrics?.transformationThrottled();
      recordTransformationThrottled(orm, accountId, new Date()).catch((error: unknown) => app.log.warn({ err: error }, 'could not record a transformation throttle'));
    },
  });
  app.decorate('transformRunner', transformRunner);
  metrics?.watchTransformPool(transformRunner);
  const delivery = {
    orm,
    sender,
    queues,
    recorder,
    retryScheduleMs: config.retryScheduleMs,
    transformRunner,
    onAttemptFinished: (finished) => {
      metrics?.attemptFinished(finished);
      hub.attemptFinished(finished);
    },
    onDeliveryFiltered: (durationMs) => metrics?.deliveryMeasured('filtered', durationMs),
    onSend: (outgoing) => copyUrlDelivery(hub, listeners, outgoing),
    tracing: tracing ?? undefined,
  } satisfies AttemptContext;
  app.decorate('delivery', delivery);
  // Another process sent a delivery: this one's sessions of its destination see what it sent.
  hub.receiveCopiesWith((fact) => listeners.mirror(fact.destinationId, null, fact.message));

  // Roles other than api deliver: the worker, and the jobs that keep the queue and the history (docs/deployment.md#roles).
  const delivers = config.role !== 'api';
  if (delivers && options.worker !== false && !databaseUrl) throw new Error('buildApp: a delivering relay needs databaseUrl (or config.databaseUrl) for its worker\'s LISTEN connection');
  const worker = delivers && options.worker !== false && databaseUrl
    ? new DeliveryWorker({
      context: delivery,
      databaseUrl,
      concurrency: config.deliveryConcurrency,
      leaseMs: leaseMsFor(config),
      ...(options.worker?.pollIntervalMs !== undefined ? { pollIntervalMs: options.worker.pollIntervalMs } : {}),
      ...(options.worker?.statisticsIntervalMs !== undefined ? { statisticsIntervalMs: options.worker.statisticsIntervalMs } : {}),
      onError: (error) => app.log.error({ err: error }, 'delivery worker error'),
    })
    : null;
  app.decorate('deliveryWorker', worker);
  // Account notifications' alerts go out through these (docs/alerts.md); closed with the app.
  const slack = delivers ? new SlackPoster({ allowPrivateDestinations: config.allowPrivateDestinations, resolve: resolveDestination }) : null;
  const email = delivers && config.smtpUrl && config.alertEmailFrom ? new EmailSender({ smtpUrl: config.smtpUrl, from: config.alertEmailFrom }) : null;
  // Closed after the drain (below): attempts recorded while draining still reach other processes' tails.
  const peers = databaseUrl && options.streamPeers !== false
    ? new StreamPeerLink({ hub, orm, databaseUrl, onError: (error) => app.log.warn({ err: error }, 'live stream link to other processes failed') })
    : null;
  await peers?.start();
  if (peers) metrics?.watchStreamPeers(peers);

  // The background jobs (jobs/*.ts), each a startPeriodic: started when the app is ready.
  const jobs: Periodic[] = [];
  const grace = jobStopGraceMs !== undefined ? { stopGraceMs: jobStopGraceMs } : {};
  const failed = (job: string) => (error: unknown) => app.log.error({ err: error }, `${job} failed`);
  function startJobs(): void {
    if (delivers && slack) {
      // Events past their retention are removed at start, then every HOOK_RETENTION_INTERVAL (docs/retention.md).
      jobs.push(startRetention({ orm, intervalMs: config.retentionIntervalMs, onError: failed('retention pass'), ...grace }));
      // Account notifications: outbox rows become events (workers deliver them); alert types are also queued for Slack and email (docs/alerts.md).
      const alerts = startAlertSender({ orm, slack, email, publicUrl: config.publicUrl, retryScheduleMs: config.retryScheduleMs, onError: failed('alert sender pass'), ...grace });
      jobs.push(alerts);
      jobs.push(startNotifier({ orm, onDrained: () => alerts.wake(), onError: failed('notifier pass'), ...grace }));
      // Ordered keys that nothing moved on (a relay died in between): docs/delivery.md#ordered-delivery.
      jobs.push(startOrderingSweep({ orm, onError: failed('ordering sweep'), ...grace }));
      // Issues whose events were all delivered resolve themselves; covered events retention removed are forgotten (docs/issues.md).
      jobs.push(startIssueSweep({ orm, onError: failed('issue sweep'), ...grace }));
    }
    // Expired playground accounts are removed at start, then every 10 minutes, by the processes that serve the API.
    if (config.role !== 'worker') jobs.push(startPlaygroundExpiry({ orm, onError: failed('playground expiry pass'), ...grace }));
  }

  let closing = false;
  let stopping: { worker: Promise<void> | undefined; jobs: Promise<unknown> } | undefined;
  /** Stops the worker's claims and the jobs' passes at once; what they have under way is awaited in order at onClose. */
  const beginStopping = () => {
    closing = true;
    stopping ??= { worker: worker?.stop(), jobs: Promise.all(jobs.map((stop) => stop())) };
    return stopping;
  };
  app.addHook('onReady', async () => {
    if (!closing) await worker?.start();
    // Not once closing began: its stop has been called for the jobs it knew.
    if (!closing) startJobs();
  });
  app.addHook('preClose', (done) => {
    beginStopping();
    done();
  });
  // Registered before any plugin, so it runs after theirs (Fastify runs onClose hooks last
  // registered first), once Fastify has stopped accepting and answered what was under way.
  app.addHook('onClose', async () => {
    const stopped = beginStopping();
    // Deliveries in flight end and are recorded; then every accepted event and result is committed.
    await stopped.worker;
    await writer.drain();
    await recorder.drain();
    await stopped.jobs;
    // Connections out: a send still under way (an alert post past its job's grace) is not waited for beyond the grace.
    await Promise.all([sender.close(), queues.close(), slack ? settlesWithin(slack.close(), jobStopGraceMs ?? PERIODIC_STOP_GRACE_MS) : null]);
    email?.close();
    await transformRunner.close();
    await transformMeter.close();
    await peers?.close();
    // After the drain above: the spans of the events and attempts it finished are exported too.
    await tracing?.shutdown();
    await reads?.close();
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done(closing ? new HookError(SERVICE_UNAVAILABLE) : undefined);
  });
  // A request that was in flight when closing began (a body still uploading) ends its
  // connection with its answer; kept alive, it would hold up the exit by the keep-alive timeout.
  app.addHook('onSend', (_request, reply, _payload, done) => {
    if (closing) reply.header('connection', 'close');
    done();
  });

  logRequests(app);
  registerErrorHandling(app);
  registerValidation(app);
  registerOrm(app, orm, { reads, onLagTolerantRead: (target) => metrics?.lagTolerantRead(target) });
  await registerOpenApi(app);
  await registerRateLimit(app);
  keepIngestHostsApart(app, config.ingestUrl ? ingestHostOf(config.ingestUrl) : null, (hostname) => domains.accountOf(hostname));
  // Ingest URLs are built on HOOK_INGEST_URL when it is set (docs/deployment.md, "Ingest on its own host").
  const ingestBaseUrl = config.ingestUrl ?? config.publicUrl;

  await app.register(healthRoutes, { orm });
  if (metrics) await app.register(metricsRoutes, { metrics, token: config.metricsToken });
  if (config.role === 'worker') return app; // a delivery-only process serves /healthz, /readyz and /metrics alone
  await app.register(accountSignupRoutes, { signupsPerAddressPerHour: config.signupsPerAddressPerHour });
  const receiver = new IngestReceiver({ writer, targets, domains, local: worker, listeners, hub, ingestUrl: config.ingestUrl });
  await app.register(async (ingest) => {
    metrics?.countIngest(ingest);
    tracing?.traceIngest(ingest);
    await ingest.register(ingestRoutes, { receiver, maxPayloadBytes: config.maxPayloadBytes });
  });
  // Tracing and a log line per request (debug) are Fastify hooks: with either, every ingest request goes through the routes.
  if (!tracing && app.log.level !== 'debug' && app.log.level !== 'trace') {
    directIngest = new DirectIngest({
      receiver,
      maxPayloadBytes: config.maxPayloadBytes,
      closing: () => closing,
      ...(metrics ? { countAnswer: (statusCode: number, duplicate: boolean, seconds: number) => metrics.ingestAnswered(statusCode, duplicate, seconds) } : {}),
      log: app.log,
    });
  }
  // Before @fastify/websocket, so its onRoute hook sees the sockets' handlers already counted.
  if (metrics) metrics.countStreamConnections(app);
  // On shutdown, stream clients hear 1001 (going away: reconnect) rather than a bare close.
  // Added before the plugin so it runs before the plugin's own close of every socket.
  app.addHook('preClose', (done) => {
    for (const client of app.websocketServer?.clients ?? []) client.close(STREAM_CLOSE_CODES.goingAway, 'relay shutting down');
    done();
  });
  await app.register(websocket, { options: { maxPayload: API_BODY_LIMIT_BYTES } });
  await app.register(async (authenticated) => {
    // First: a page of another origin gets 403 on /mcp whatever its key (docs/agents.md#mcp); the relay's own origin may call it.
    refuseForeignMcpOrigins(authenticated, [...config.mcpAllowedOrigins, ...(config.publicUrl ? [new URL(config.publicUrl).origin] : [])]);
    requireApiKey(authenticated);
    requireAllowedAddress(authenticated, callerAddresses);
    limitApiRequests(authenticated, config.apiRateLimit);
    await authenticated.register(accountRoutes);
    await authenticated.register(accountSettingsRoutes, { ownHosts, domains });
    await authenticated.register(customDomainRoutes, { ownHosts, domains, resolver: dnsResolver(config.dnsServers) });
    await authenticated.register(accountDeletionRoutes, { targets, domains, leaseMs: leaseMsFor(config) });
    await authenticated.register(dailyUsageRoutes);
    await authenticated.register(apiKeyRoutes);
    await authenticated.register(memberRoutes);
    await authenticated.register(endpointRoutes, { ingestBaseUrl, targets, allowPrivateDestinations: config.allowPrivateDestinations, listeners });
    await authenticated.register(destinationRoutes, { targets, allowPrivateDestinations: config.allowPrivateDestinations, listeners });
    await authenticated.register(eventRoutes, { delivery, leaseMs: leaseMsFor(config), listeners });
    await authenticated.register(issueRoutes);
    await authenticated.register(transformationRoutes);
    await authenticated.register(mcpRoutes, { callerAddresses });
    await authenticated.register(notificationRoutes, { allowPrivateDestinations: config.allowPrivateDestinations });
    await authenticated.register(alertRoutes, { allowPrivateDestinations: config.allowPrivateDestinations, emailAvailable: config.smtpUrl !== null });
    await authenticated.register(streamRoutes, { orm, delivery, hub, listeners, leaseMs: leaseMsFor(config), ingestBaseUrl, heartbeatIntervalMs: streamHeartbeatIntervalMs, listenPollIntervalMs });
  });
  await app.register(siteAssets);
  await app.register(consolePages);
  await app.register(consoleSessionRoutes);
  await app.register(landingRoutes, { publicUrl: config.publicUrl });
  await app.register(playgroundRoutes, { hub, ingestBaseUrl, heartbeatIntervalMs: streamHeartbeatIntervalMs, sessionsPerAddressPerHour: config.playgroundSessionsPerAddressPerHour, signupsPerAddressPerHour: config.signupsPerAddressPerHour });
  return app;
}
