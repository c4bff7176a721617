/**
 * OpenTelemetry traces of the relay (docs/deployment.md#tracing): one trace per event, from
 * the request that brought it to every delivery attempt, exported over OTLP/HTTP.
 *
 * - `POST /v1/ingest/:ingest_id` (server span): the ingest request, a child of the sender's
 *   `traceparent` when it sent one.
 * - `store event`: the event's wait for its batch and the batch's INSERT (EventWriter), a
 *   child of the ingest span. One span per event rather than one per batch: each trace
 *   shows what its own event waited, and it costs no more than a batch span with links.
 * - `delivery attempt` (a client span for URL destinations): one attempt, whatever made it
 *   (worker, ingest's shortcut, replay, `hook listen`), a child of the ingest span through
 *   the traceparent stored with the event (`event.trace_parent`), so attempts made hours
 *   later or by another process join the same trace. The delivery carries a `traceparent`
 *   naming this span.
 * - `listen forward`: a `hook listen` session's round trip for an attempt (the `delivery`
 *   message out, the listener's `result` back), a child of the attempt.
 *
 * Nothing here is loaded when tracing is off (app.ts imports this module only when it is
 * on), and the places it hooks into test one optional field, so plain ingest and delivery
 * make no span objects. The tracer provider belongs to the app (no global registration):
 * every span gets its parent passed explicitly, so no context manager is needed either.
 */
import { diag, DiagLogLevel, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_CLIENT_ADDRESS, ATTR_DB_COLLECTION_NAME, ATTR_DB_OPERATION_NAME, ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_NETWORK_PROTOCOL_VERSION, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT, ATTR_SERVICE_NAME,
  ATTR_URL_FULL, ATTR_URL_SCHEME, ATTR_USER_AGENT_ORIGINAL, DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance } from 'fastify';
import type { ClaimedDelivery, InsertOutcome, NewEvent } from '@hook/db';
import type { TracingConfig } from './tracing-config.ts';
import type { AttemptOutcome, OutgoingDelivery, Transport } from './delivery/attempt.ts';
import { transformedUrl } from './delivery/prepare.ts';
import type { SendResult } from './delivery/sender.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The span of an ingest request; null (or absent) when the relay does not trace. */
    ingestSpan: IngestSpan | null;
  }
}

/** What the delivery path asks of tracing (AttemptContext.tracing). */
export type DeliveryTracing = Pick<Tracing, 'traceAttempt' | 'startListenForward'>;

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  get: (carrier: Record<string, string | string[] | undefined>, key: string) => carrier[key],
  keys: (carrier: Record<string, string | string[] | undefined>) => Object.keys(carrier),
};

/** The `traceparent` value naming a span (W3C Trace Context, version 00). */
function traceParentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A context whose span is the one a stored or sent `traceparent` names; the root context when there is none (or it is invalid). */
function contextOf(traceParent: string | null | undefined): Context {
  return traceParent ? propagator.extract(ROOT_CONTEXT, { traceparent: traceParent }, headerGetter) : ROOT_CONTEXT;
}

/**
 * A destination URL as a span may show it (url.full): the query is dropped (destination
 * URLs often carry a token there) and credentials are REDACTED, as the HTTP conventions ask.
 */
export function spanUrl(url: URL): string {
  const shown = new URL(url.href);
  shown.search = '';
  shown.hash = '';
  if (shown.username) shown.username = 'REDACTED';
  if (shown.password) shown.password = 'REDACTED';
  return shown.href;
}

/**
 * A short, low-cardinality kind for a failed attempt (error.type): null for a success; the
 * status code of any other answer, as the HTTP conventions ask; else the attempt's kind
 * (SendResult.kind: timeout, connection_refused, dns, tls, network_error,
 * transformation_error, broker_error).
 */
function errorType(result: Pick<SendResult, 'status' | 'kind'>): string | null {
  if (result.kind === 'ok') return null;
  return result.status !== null ? String(result.status) : result.kind;
}

function samplerFor(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on': return new AlwaysOnSampler();
    case 'always_off': return new AlwaysOffSampler();
    case 'traceidratio': return ratio;
    case 'parentbased_always_off': return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio': return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on': return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The span of one ingest request (see the module comment). */
export class IngestSpan {
  readonly #span: Span;
  #ended = false;

  constructor(span: Span) {
    this.#span = span;
  }

  /**
   * Names the event this request is stored as (hook.event_id) and returns the traceparent
   * to store with it, which makes its storage and delivery attempts children of this span.
   */
  receivedAs(eventId: string): string {
    this.#span.setAttribute('hook.event_id', eventId);
    return traceParentOf(this.#span);
  }

  end(statusCode: number | null, endpointId: string | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    if (endpointId !== undefined) this.#span.setAttribute('hook.endpoint_id', endpointId);
    if (statusCode === null) {
      this.#span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: 'the sender closed the connection before the answer' });
    } else {
      this.#span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
      // A server span is in error for 5xx only: a 4xx is the sender's mistake, answered as it should be.
      if (statusCode >= 500) {
        this.#span.setAttribute(ATTR_ERROR_TYPE, String(statusCode));
        this.#span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    this.#span.end();
  }
}

/** The span of a `hook listen` session's round trip for one attempt (see the module comment). */
export class ListenForwardSpan {
  readonly #span: Span;

  constructor(span: Span) {
    this.#span = span;
  }

  /** The listener's answer (null: it went away before answering, and the delivery is given back untried). */
  end(answer: SendResult | null): void {
    if (answer === null) {
      this.#span.setAttribute(ATTR_ERROR_TYPE, 'listener_gone');
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: 'the listener went away before answering' });
    } else {
      if (answer.status !== null) this.#span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, answer.status);
      const type = errorType(answer);
      if (type !== null) {
        this.#span.setAttribute(ATTR_ERROR_TYPE, type);
        this.#span.setStatus({ code: SpanStatusCode.ERROR, ...(answer.error ? { message: answer.error } : {}) });
      }
    }
    this.#span.end();
  }
}

export interface TracingOptions {
  /** Told when spans could not be exported (the collector is down or refuses them, the queue was full and spans were dropped). */
  onExportProblem: (message: string) => void;
}

/** The relay's tracer and what it traces (see the module comment). Made by startTracing, shut down with the app. */
export class Tracing {
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;

  constructor(provider: TracerProvider) {
    this.#provider = provider;
    this.#tracer = provider.getTracer('@hook/relay');
  }

  /** Traces the ingest requests of `app` (the plugin scope that holds the ingest routes). */
  traceIngest(app: FastifyInstance): void {
    app.decorateRequest('ingestSpan', null);
    app.addHook('onRequest', (request, _reply, done) => {
      const route = request.routeOptions.url ?? '/v1/ingest/:ingest_id';
      const attributes: Attributes = {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_HTTP_ROUTE]: route,
        [ATTR_URL_SCHEME]: request.protocol,
        [ATTR_SERVER_ADDRESS]: request.hostname,
        [ATTR_CLIENT_ADDRESS]: request.ip,
        [ATTR_NETWORK_PROTOCOL_VERSION]: request.raw.httpVersion,
        // No url.path: it holds the ingest id, which is the URL's secret.
      };
      if (request.port !== null) attributes[ATTR_SERVER_PORT] = request.port;
      const userAgent = request.headers['user-agent'];
      if (userAgent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent;
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
      request.ingestSpan = new IngestSpan(this.#tracer.startSpan(`${request.method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent));
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      request.ingestSpan?.end(reply.statusCode, request.ingestTarget?.id);
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      request.ingestSpan?.end(null, request.ingestTarget?.id);
      done();
    });
  }

  /** EventWriter's `traceWrite`: a `store event` span around an event's write, child of its ingest span. */
  readonly traceWrite = async (event: NewEvent, write: () => Promise<InsertOutcome>): Promise<InsertOutcome> => {
    // Events not stored by a traced request (handshakes, notifications) are written untraced.
    if (!event.traceParent) return write();
    const span = this.#tracer.startSpan('store event', {
      attributes: {
        'hook.event_id': event.id,
        'hook.endpoint_id': event.endpointId,
        [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
        [ATTR_DB_OPERATION_NAME]: 'INSERT',
        [ATTR_DB_COLLECTION_NAME]: 'event',
      },
    }, contextOf(event.traceParent));
    try {
      const outcome = await write();
      span.setAttribute('hook.store.outcome', outcome.stored ? 'stored' : outcome.reason);
      if (!outcome.stored && outcome.reason === 'duplicate') span.setAttribute('hook.original_event_id', outcome.originalId);
      return outcome;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  };

  /**
   * Runs one delivery attempt (`attempt`, given the transport to use) inside a `delivery
   * attempt` span, child of the event's ingest span. The transport it gets sets the
   * delivery's `traceparent` to this span: the relay's span, not the sender's, is the
   * destination's parent (the sender's trace goes on through the ingest span). The sender's
   * `tracestate` still travels, as it belongs to the same trace; if the relay started a new
   * trace instead (the event has no trace of its own), it is dropped.
   */
  async traceAttempt(delivery: ClaimedDelivery, transport: Transport, attempt: (transport: Transport) => Promise<AttemptOutcome>): Promise<AttemptOutcome> {
    const toUrl = delivery.destinationType === 'url' && delivery.destinationUrl !== null;
    const span = this.#tracer.startSpan('delivery attempt', {
      kind: toUrl ? SpanKind.CLIENT : SpanKind.INTERNAL,
      attributes: {
        'hook.event_id': delivery.id,
        'hook.endpoint_id': delivery.endpointId,
        'hook.destination_id': delivery.destinationId,
        'hook.destination_type': delivery.destinationType,
        'hook.attempt': delivery.attemptCount + 1,
        'hook.trigger': delivery.trigger,
      },
    }, contextOf(delivery.traceParent));
    const traced: Transport = (outgoing) => {
      const traceParent = traceParentOf(span);
      const senders = outgoing.headers.traceparent;
      outgoing.headers.traceparent = traceParent;
      if (outgoing.headers.tracestate !== undefined && senders?.split('-')[1] !== span.spanContext().traceId) delete outgoing.headers.tracestate;
      if (toUrl) {
        const url = new URL(transformedUrl(delivery.destinationUrl!, outgoing.request));
        span.setAttributes({
          [ATTR_HTTP_REQUEST_METHOD]: 'POST',
          [ATTR_URL_FULL]: spanUrl(url),
          [ATTR_SERVER_ADDRESS]: url.hostname.replace(/^\[|\]$/g, ''),
          [ATTR_SERVER_PORT]: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
        });
      }
      return transport(outgoing);
    };
    try {
      const outcome = await attempt(traced);
      span.setAttribute('hook.delivery.status', outcome.next.status);
      const { result } = outcome;
      if (result === null) {
        // Nothing was sent: filtered, deferred for a transformation thread, or a listener that went away.
        span.setAttribute('hook.attempt.sent', false);
      } else {
        if (result.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
        const type = errorType(result);
        if (type !== null) {
          span.setAttribute(ATTR_ERROR_TYPE, type);
          span.setStatus({ code: SpanStatusCode.ERROR, ...(result.error ? { message: result.error } : {}) });
        }
      }
      return outcome;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  }

  /** A `listen forward` span for a delivery a `hook listen` session sends, child of the attempt its `traceparent` names. */
  startListenForward(outgoing: OutgoingDelivery, sessionId: string, deliveryId: string): ListenForwardSpan {
    const { delivery } = outgoing;
    return new ListenForwardSpan(this.#tracer.startSpan('listen forward', {
      kind: SpanKind.CLIENT,
      attributes: {
        'hook.event_id': delivery.id,
        'hook.endpoint_id': delivery.endpointId,
        'hook.destination_id': delivery.destinationId,
        'hook.attempt': delivery.attemptCount + 1,
        'hook.listen.session_id': sessionId,
        'hook.listen.delivery_id': deliveryId,
      },
    }, contextOf(outgoing.headers.traceparent)));
  }

  /** Exports what is left and stops (on app close, after every event and attempt is recorded). */
  async shutdown(): Promise<void> {
    await this.#provider.shutdown();
  }
}

/**
 * Makes the relay's tracer from its OTEL_* settings: an OTLP/HTTP exporter (protobuf or
 * JSON) behind a batch processor, the sampler asked for, and a resource named by
 * OTEL_SERVICE_NAME.
 */
export function startTracing(config: TracingConfig, options: TracingOptions): Tracing {
  const exporterOptions = { url: config.url, headers: config.headers, timeoutMillis: config.exportTimeoutMs };
  const exporter = config.protocol === 'http/json' ? new JsonTraceExporter(exporterOptions) : new ProtobufTraceExporter(exporterOptions);
  // The SDK reports failed exports and dropped spans through its diagnostic logger (one per
  // process, as OpenTelemetry has it); its warnings and errors go to the relay's log.
  const report = (message: string, ...args: unknown[]): void => options.onExportProblem([message, ...args.map(String)].join(' '));
  diag.setLogger({ error: report, warn: report, info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: config.serviceName })),
    sampler: samplerFor(config),
    spanProcessors: [new BatchSpanProcessor({
      exporter,
      scheduledDelayMillis: config.scheduleDelayMs,
      maxQueueSize: config.maxQueueSize,
      maxExportBatchSize: config.maxExportBatchSize,
      exportTimeoutMillis: config.exportTimeoutMs,
    })],
  });
  return new Tracing(provider);
}
