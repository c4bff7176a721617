/**
 * The OpenTelemetry variables the relay honours (the standard names and meanings), declared
 * as config.ts declares HOOK_*: each once, with its docs text, default and parser. Tracing is
 * off unless an OTLP endpoint is set; the other OTEL_* are read only when it is on, since
 * environments often set them for every SDK they run.
 */
import { ConfigError, boolean, derived, oneOf, readVariable, readVariables, text, url, variable, wholeNumber, type EnvReader, type Parser, type ValuesOf } from './env-variables.ts';

export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

const SECTION = 'Tracing (OpenTelemetry)';

/** `name=value,name2=value2` (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES): names trimmed, values percent-decoded. */
const keyValueList: Parser<Record<string, string>> = (value, name) => {
  const pairs: Record<string, string> = {};
  for (const entry of value.split(',').map((part) => part.trim()).filter(Boolean)) {
    const equals = entry.indexOf('=');
    const key = equals === -1 ? '' : entry.slice(0, equals).trim();
    let decoded: string | undefined;
    try {
      decoded = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      // reported below
    }
    // The entry itself is not echoed: header values are often credentials.
    if (key === '' || decoded === undefined) throw new ConfigError(name, '(not shown)', 'comma-separated name=value pairs with percent-encoded values, such as x-honeycomb-team=KEY,x-tenant=a%20b');
    pairs[key] = decoded;
  }
  return pairs;
};

const fraction: Parser<number> = (value, name) => {
  if (!/^\d*\.?\d+$/.test(value) || Number(value) > 1) throw new ConfigError(name, value, 'the fraction of traces to record, from 0 to 1, such as 0.1');
  return Number(value);
};

// The switches: read first, and alone when they turn tracing off.
const SDK_DISABLED = variable({
  name: 'OTEL_SDK_DISABLED',
  section: SECTION,
format: '`true` or `false` (as the other booleans)',
defaultText: '`false`',
doc: '`true` turns tracing off whatever else is set',
  default: false,
  parse: boolean,
});
const TRACES_EXPORTER = variable({
  name: 'OTEL_TRACES_EXPORTER',
  section: SECTION,
format: '`otlp` or `none`',
defaultText: '`otlp`',
doc: '`none` turns tracing off; other exporters are refused at start',
  default: 'otlp',
  parse: oneOf(['otlp', 'none'], { anyCase: true, expected: 'otlp or none (the relay exports traces over OTLP/HTTP only)' }),
});
const ENDPOINT = variable<string | undefined>({
  name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  section: SECTION,
format: 'URL (`http://` or `https://`)',
defaultText: 'unset (tracing off)',
doc: 'The collector\'s OTLP/HTTP base URL, e.g. `http://jaeger:4318`; spans go to it with `/v1/traces` appended',
  default: undefined,
  parse: url(['http:', 'https:']),
});
const TRACES_ENDPOINT = variable<string | undefined>({
  name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  section: SECTION,
format: 'URL',
defaultText: 'unset',
doc: 'The full URL spans are sent to, used as given (no path appended); wins over `OTEL_EXPORTER_OTLP_ENDPOINT`',
  default: undefined,
  // The signal's own endpoint is used as given; the general one is a base the signal's path is added to.
  parse: url(['http:', 'https:'], { asGiven: true }),
});
const RESOURCE_ATTRIBUTES = variable({
  name: 'OTEL_RESOURCE_ATTRIBUTES',
  section: SECTION,
format: '`key=value,…`, values percent-encoded',
defaultText: 'unset',
doc: 'More resource attributes on every span, e.g. `deployment.environment.name=prod,service.instance.id=relay-2`',
  default: {},
  parse: keyValueList,
});
const MAX_QUEUE_SIZE = variable({
  name: 'OTEL_BSP_MAX_QUEUE_SIZE',
  section: SECTION,
format: 'whole number',
defaultText: '`2048`',
doc: 'Most finished spans waiting for export; while the queue is full (the collector is down or slow) new spans are dropped, never ingest or delivery held up',
  default: 2048,
  parse: wholeNumber(1, 1_000_000),
});

/** What TracingConfig holds besides `url`, read once tracing is on. */
const EXPORT_VARIABLES = {
  protocol: variable<OtlpProtocol>({
    name: ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'],
    section: SECTION,
format: '`http/protobuf` or `http/json`',
defaultText: '`http/protobuf`',
doc: 'Encoding of export requests (the traces one wins). `grpc` is refused at start: point the relay at the collector\'s HTTP port (4318), not its gRPC port (4317)',
    default: 'http/protobuf',
    parse: oneOf(OTLP_PROTOCOLS, { expected: 'http/protobuf or http/json (the relay exports over OTLP/HTTP: use the collector\'s HTTP port, usually 4318, not gRPC)' }),
  }),
  headers: variable({
    name: ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'],
    section: SECTION,
format: '`name=value,name2=value2`, values percent-encoded',
defaultText: 'unset',
doc: 'Headers sent with every export request, e.g. `x-honeycomb-team=<key>` or `authorization=Basic%20<base64>`. Both are read; the traces one wins for a name both set. A malformed list stops the relay at start without echoing it (values are often credentials)',
    default: {},
    parse: keyValueList,
    combine: (lists) => Object.assign({}, ...lists),
  }),
  exportTimeoutMs: variable({
    name: ['OTEL_EXPORTER_OTLP_TIMEOUT', 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'],
    section: SECTION,
format: 'whole number of ms, 1–600000',
defaultText: '`10000`',
doc: 'How long one export request may take',
    default: 10_000,
    parse: wholeNumber(1, 600_000),
  }),
  serviceName: variable({
    name: 'OTEL_SERVICE_NAME',
    section: SECTION,
format: 'text',
defaultText: '`hook-relay` (or `service.name` from `OTEL_RESOURCE_ATTRIBUTES`)',
doc: 'The `service.name` the spans are filed under',
    default: derived((env) => readVariable(RESOURCE_ATTRIBUTES, env)['service.name'] ?? 'hook-relay'),
    parse: text,
  }),
  resourceAttributes: RESOURCE_ATTRIBUTES,
  sampler: variable<TraceSampler>({
    name: 'OTEL_TRACES_SAMPLER',
    section: SECTION,
format: '`parentbased_always_on`, `parentbased_always_off`, `parentbased_traceidratio`, `always_on`, `always_off`, `traceidratio`',
defaultText: '`parentbased_always_on`',
doc: 'Which traces are recorded. The `parentbased_` ones follow the sender\'s sampled flag when its request carried a `traceparent` and decide themselves otherwise',
    default: 'parentbased_always_on',
    parse: oneOf(TRACE_SAMPLERS, { anyCase: true }),
  }),
  samplerRatio: variable({
    name: 'OTEL_TRACES_SAMPLER_ARG',
    section: SECTION,
format: 'number from 0 to 1',
defaultText: '`1`',
doc: 'The fraction of traces the `traceidratio` samplers record',
    default: 1,
    parse: fraction,
  }),
  scheduleDelayMs: variable({
    name: 'OTEL_BSP_SCHEDULE_DELAY',
    section: SECTION,
format: 'whole number of ms',
defaultText: '`5000`',
doc: 'Time between two exports of finished spans',
    default: 5000,
    parse: wholeNumber(1, 3_600_000),
  }),
  maxQueueSize: MAX_QUEUE_SIZE,
  maxExportBatchSize: variable({
    name: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    section: SECTION,
format: 'whole number, at most the queue size',
defaultText: '`512`',
doc: 'Most spans in one export request',
    default: derived((env) => Math.min(512, readVariable(MAX_QUEUE_SIZE, env))),
    parse: wholeNumber(1, (env) => readVariable(MAX_QUEUE_SIZE, env)),
  }),
};

/** Every OTEL_* variable, in the order docs/configuration.md lists them. */
export const TRACING_VARIABLES = [
  ENDPOINT, TRACES_ENDPOINT, EXPORT_VARIABLES.protocol, EXPORT_VARIABLES.headers, EXPORT_VARIABLES.exportTimeoutMs, EXPORT_VARIABLES.serviceName,
  RESOURCE_ATTRIBUTES, EXPORT_VARIABLES.sampler, EXPORT_VARIABLES.samplerRatio, TRACES_EXPORTER, SDK_DISABLED, EXPORT_VARIABLES.scheduleDelayMs,
  MAX_QUEUE_SIZE, EXPORT_VARIABLES.maxExportBatchSize,
] as const;

/** The tracing settings (startTracing takes them): `url` where spans are sent, and one field per EXPORT_VARIABLES entry. */
export type TracingConfig = { url: string } & ValuesOf<typeof EXPORT_VARIABLES>;

/** The OTEL_* variables; null when tracing is off (no endpoint, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none). */
export function loadTracingConfig(env: EnvReader): TracingConfig | null {
  if (readVariable(SDK_DISABLED, env) || readVariable(TRACES_EXPORTER, env) === 'none') return null;
  const tracesEndpoint = readVariable(TRACES_ENDPOINT, env);
  const endpoint = tracesEndpoint === undefined ? readVariable(ENDPOINT, env) : undefined;
  if (tracesEndpoint === undefined && endpoint === undefined) return null;
  return { url: tracesEndpoint ?? `${endpoint}/v1/traces`, ...readVariables(EXPORT_VARIABLES, env) };
}
