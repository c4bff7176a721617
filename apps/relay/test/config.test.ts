import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { CONFIG_DOC, DOCUMENTED_VARIABLES, REGENERATE_CONFIG_DOC, withGeneratedTables } from '../src/config-docs.ts';
import {
  boolean, byteSize, DerivedDefault, duration, envReader, oneOf, onOff, readVariable, url, variable, variableNames, wholeNumber, type Parser,
} from '../src/env-variables.ts';

const SECRET_KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const SECRET_KEY_BASE64 = SECRET_KEY.toString('base64');
const SECRET_KEY_HEX = SECRET_KEY.toString('hex');

describe('loadConfig', () => {
  it('reads HOOK_SECRET_KEY as base64 or hex and requires it with an external database', () => {
    expect(loadConfig({ HOOK_SECRET_KEY: SECRET_KEY_BASE64 }).secretKey).toEqual(SECRET_KEY);
    expect(loadConfig({ HOOK_SECRET_KEY: SECRET_KEY_HEX }).secretKey).toEqual(SECRET_KEY);
    expect(loadConfig({}).secretKey).toBeUndefined(); // the embedded default keeps its key in the data dir
    expect(() => loadConfig({ HOOK_DATABASE_URL: 'postgres://db/hook' })).toThrow(ConfigError);
    expect(() => loadConfig({ HOOK_DATABASE_URL: 'postgres://db/hook' })).toThrow(/^HOOK_SECRET_KEY is not set: .*openssl rand -base64 32/);
    // 16 bytes is not a 256-bit key; the message never repeats the value.
    const short = Buffer.alloc(16, 1).toString('base64');
    expect(() => loadConfig({ HOOK_SECRET_KEY: short })).toThrow(/^HOOK_SECRET_KEY=.*openssl rand -base64 32/);
    expect(() => loadConfig({ HOOK_SECRET_KEY: short })).not.toThrow(short);
  });

  it('has defaults for everything', () => {
    expect(loadConfig({})).toEqual({
      databaseUrl: undefined,
      databaseReadUrls: [],
      databaseReadMaxLagMs: 5000,
      databaseDistributed: null,
      dataDir: '.hook',
      secretKey: undefined,
      host: '127.0.0.1',
      port: 8080,
      trustProxy: false,
      publicUrl: undefined,
      maxPayloadBytes: 10 * 1024 * 1024,
      logLevel: 'info',
      retryScheduleMs: [30_000, 120_000, 480_000, 1_920_000, 7_680_000, 30_720_000],
      deliveryTimeoutMs: 15_000,
      deliveryConcurrency: 256,
      role: 'all',
      allowPrivateDestinations: true,
      signupsPerAddressPerHour: 20,
      playgroundSessionsPerAddressPerHour: 10,
      apiRateLimit: 'plan',
      retentionIntervalMs: 3_600_000,
      transformTimeoutMs: 100,
      transformMemoryBytes: 16 * 1024 * 1024,
      transformThreads: Math.max(1, availableParallelism() - 1),
      metrics: true,
      metricsToken: null,
      mcpAllowedOrigins: [],
      dnsServers: null,
      tracing: null,
      smtpUrl: null,
      alertEmailFrom: null,
    });
  });

  it('allows private destinations by default only with the embedded database', () => {
    expect(loadConfig({ HOOK_DATABASE_URL: 'postgres://db/hook', HOOK_SECRET_KEY: SECRET_KEY_HEX }).allowPrivateDestinations).toBe(false);
    expect(loadConfig({ HOOK_DATABASE_URL: 'postgres://db/hook', HOOK_SECRET_KEY: SECRET_KEY_HEX, HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' }).allowPrivateDestinations).toBe(true);
    expect(loadConfig({ HOOK_ALLOW_PRIVATE_DESTINATIONS: 'false' }).allowPrivateDestinations).toBe(false);
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        HOOK_DATABASE_URL: 'postgres://u@db:5432/hook',
        HOOK_DATABASE_READ_URL: 'postgres://u:p%2Cw@replica-1:5432/hook, postgresql://u@replica-2/hook/',
        HOOK_DATABASE_READ_MAX_LAG_MS: '2500',
        HOOK_DATABASE_DISTRIBUTED: 'Citus',
        HOOK_SECRET_KEY: SECRET_KEY_BASE64,
        HOOK_DATA_DIR: '/var/lib/hook',
        HOOK_HOST: '0.0.0.0',
        HOOK_PORT: '0',
        HOOK_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
        HOOK_PUBLIC_URL: 'https://hooks.example.com/',
        HOOK_MAX_PAYLOAD: '512kb',
        HOOK_LOG_LEVEL: 'debug',
        HOOK_RETRY_SCHEDULE: '100ms, 2s,2h8m',
        HOOK_DELIVERY_TIMEOUT: '500ms',
        HOOK_DELIVERY_CONCURRENCY: '8',
        HOOK_ROLE: 'worker',
        HOOK_ALLOW_PRIVATE_DESTINATIONS: 'no',
        HOOK_SIGNUP_RATE_LIMIT: '5',
        HOOK_PLAYGROUND_RATE_LIMIT: '3',
        HOOK_API_RATE_LIMIT: '5',
        HOOK_RETENTION_INTERVAL: '30m',
        HOOK_TRANSFORM_TIMEOUT: '250ms',
        HOOK_TRANSFORM_MEMORY: '32mb',
        HOOK_TRANSFORM_THREADS: '3',
        HOOK_METRICS: 'OFF',
        HOOK_METRICS_TOKEN: 'abcdef0123456789abcdef',
        HOOK_MCP_ALLOWED_ORIGINS: 'https://agents.example.com',
        HOOK_DNS_SERVERS: '127.0.0.1:5353, 9.9.9.9,[2001:db8::53]:53, 2001:db8::54',
        HOOK_SMTP_URL: 'smtp://alerts:secret@smtp.example.com:587',
        HOOK_ALERT_EMAIL_FROM: 'Hook <alerts@example.com>',
      }),
    ).toEqual({
      databaseUrl: 'postgres://u@db:5432/hook',
      databaseReadUrls: ['postgres://u:p%2Cw@replica-1:5432/hook', 'postgresql://u@replica-2/hook'],
      databaseReadMaxLagMs: 2500,
      databaseDistributed: 'citus',
      dataDir: '/var/lib/hook',
      secretKey: SECRET_KEY,
      host: '0.0.0.0',
      port: 0,
      trustProxy: ['10.0.0.0/8', '127.0.0.1'],
      publicUrl: 'https://hooks.example.com',
      maxPayloadBytes: 512 * 1024,
      logLevel: 'debug',
      retryScheduleMs: [100, 2000, 7_680_000],
      deliveryTimeoutMs: 500,
      deliveryConcurrency: 8,
      role: 'worker',
      allowPrivateDestinations: false,
      signupsPerAddressPerHour: 5,
      playgroundSessionsPerAddressPerHour: 3,
      apiRateLimit: 5,
      retentionIntervalMs: 1_800_000,
      transformTimeoutMs: 250,
      transformMemoryBytes: 32 * 1024 * 1024,
      transformThreads: 3,
      metrics: false,
      metricsToken: 'abcdef0123456789abcdef',
      mcpAllowedOrigins: ['https://agents.example.com'],
      dnsServers: ['127.0.0.1:5353', '9.9.9.9', '[2001:db8::53]:53', '2001:db8::54'],
      tracing: null,
      smtpUrl: 'smtp://alerts:secret@smtp.example.com:587',
      alertEmailFrom: 'Hook <alerts@example.com>',
    });
    expect(loadConfig({ HOOK_API_RATE_LIMIT: '0' }).apiRateLimit).toBe(0);
    expect(loadConfig({ HOOK_API_RATE_LIMIT: 'Plan' }).apiRateLimit).toBe('plan');
    expect(loadConfig({ HOOK_SIGNUP_RATE_LIMIT: '0' }).signupsPerAddressPerHour).toBe(0);
    expect(loadConfig({ HOOK_MAX_PAYLOAD: '1048576' }).maxPayloadBytes).toBe(1048576);
    expect(loadConfig({ HOOK_MAX_PAYLOAD: '10MB' }).maxPayloadBytes).toBe(10 * 1024 * 1024);
    expect(loadConfig({ HOOK_PORT: '  ' }).port).toBe(8080);
  });

  it('names the variable and what it expects when a value is unusable', () => {
    const cases: Record<string, string> = {
      HOOK_PORT: 'eighty',
      HOOK_MAX_PAYLOAD: '-5',
      HOOK_LOG_LEVEL: 'loud',
      HOOK_PUBLIC_URL: 'hooks.example.com',
      HOOK_DATABASE_URL: 'mysql://db',
      HOOK_RETRY_SCHEDULE: '30s,soon',
      HOOK_DELIVERY_TIMEOUT: '15',
      HOOK_DELIVERY_CONCURRENCY: '0',
      HOOK_ROLE: 'both',
      HOOK_ALLOW_PRIVATE_DESTINATIONS: 'maybe',
      HOOK_SIGNUP_RATE_LIMIT: '-1',
      HOOK_PLAYGROUND_RATE_LIMIT: 'lots',
      HOOK_TRUST_PROXY: 'proxy.internal',
      HOOK_API_RATE_LIMIT: 'fast',
      HOOK_RETENTION_INTERVAL: '1',
      HOOK_TRANSFORM_TIMEOUT: '100',
      HOOK_TRANSFORM_MEMORY: '1kb',
      HOOK_TRANSFORM_THREADS: '0',
      HOOK_METRICS: 'false',
      HOOK_DATABASE_DISTRIBUTED: 'yes',
      HOOK_METRICS_TOKEN: 'short',
      HOOK_DNS_SERVERS: 'dns.example.com',
      HOOK_SECRET_KEY: 'c2hvcnQ=',
    };
    for (const [variable, value] of Object.entries(cases)) {
      expect(() => loadConfig({ [variable]: value }), variable).toThrow(ConfigError);
      expect(() => loadConfig({ [variable]: value }), variable).toThrow(new RegExp(`^${variable}=`));
    }
    expect(() => loadConfig({ HOOK_PORT: '70000' })).toThrow(/0 to 65535/);
    for (const servers of ['127.0.0.1:0', '127.0.0.1:53,resolver', '[2001:db8::53]:99999', ',']) expect(() => loadConfig({ HOOK_DNS_SERVERS: servers }), servers).toThrow(/^HOOK_DNS_SERVERS=/);
    expect(() => loadConfig({ HOOK_METRICS_TOKEN: 'has a space in it somewhere' })).toThrow(/^HOOK_METRICS_TOKEN="\(not shown\)" is not valid/);
    expect(() => loadConfig({ HOOK_METRICS_TOKEN: 'has a space in it somewhere' })).not.toThrow(/has a space/);
  });

  it('reads HOOK_DATABASE_READ_URL only beside HOOK_DATABASE_URL, never echoing the URLs (they carry passwords)', () => {
    const primary = { HOOK_DATABASE_URL: 'postgres://u:secret@db:5432/hook', HOOK_SECRET_KEY: SECRET_KEY_HEX };
    expect(() => loadConfig({ HOOK_DATABASE_READ_URL: 'postgres://u:secret@replica/hook' })).toThrow(/^HOOK_DATABASE_URL is not set: HOOK_DATABASE_READ_URL names read replicas/);
    expect(() => loadConfig({ ...primary, HOOK_DATABASE_READ_URL: 'postgres://u:secret@replica/hook,mysql://u:secret@replica-2' }))
      .toThrow(/^HOOK_DATABASE_READ_URL="\(not shown\)" is not valid: expected comma-separated URLs .*\(URL 2 of 2 is not\)\.$/);
    expect(() => loadConfig({ ...primary, HOOK_DATABASE_READ_URL: 'postgres://u:secret@db:5432/hook/' })).toThrow(/not HOOK_DATABASE_URL's own primary/);
    expect(() => loadConfig({ ...primary, HOOK_DATABASE_READ_URL: 'u:hunter2@replica:5432' })).toThrow(expect.objectContaining({ message: expect.not.stringContaining('hunter2') }));
    expect(loadConfig({ ...primary, HOOK_DATABASE_READ_URL: ' , ' }).databaseReadUrls).toEqual([]);
    for (const lag of ['99', '5s', '-1', '3600001']) {
      expect(() => loadConfig({ HOOK_DATABASE_READ_MAX_LAG_MS: lag }), lag).toThrow(/^HOOK_DATABASE_READ_MAX_LAG_MS=.*whole number of milliseconds from 100 to 3600000/);
    }
  });

  it('reads HOOK_INGEST_URL, whose host name must differ from HOOK_PUBLIC_URL\'s (ports share cookies)', () => {
    expect(loadConfig({}).ingestUrl).toBeUndefined();
    expect(loadConfig({ HOOK_INGEST_URL: 'https://in.hooks-content.example/', HOOK_PUBLIC_URL: 'https://hooks.example.com' }).ingestUrl).toBe('https://in.hooks-content.example');
    expect(() => loadConfig({ HOOK_INGEST_URL: 'ftp://in.example' })).toThrow(/^HOOK_INGEST_URL="ftp:\/\/in.example" is not valid/);
    expect(() => loadConfig({ HOOK_INGEST_URL: 'https://hooks.example.com:8443', HOOK_PUBLIC_URL: 'https://hooks.example.com' })).toThrow(/a host name other than HOOK_PUBLIC_URL's \(hooks.example.com\)/);
  });

  it('reads HOOK_TRUST_PROXY as a boolean, a hop count or proxy addresses', () => {
    expect(loadConfig({ HOOK_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ HOOK_TRUST_PROXY: 'no' }).trustProxy).toBe(false);
    expect(loadConfig({ HOOK_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ HOOK_TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ HOOK_TRUST_PROXY: '::1, 172.16.0.0/12' }).trustProxy).toEqual(['::1', '172.16.0.0/12']);
    expect(() => loadConfig({ HOOK_TRUST_PROXY: '10.0.0.0/33' })).toThrow(/^HOOK_TRUST_PROXY=/);
  });

  it('turns tracing on only with an OTLP endpoint, and reads the standard OTEL_* variables', () => {
    // Off: no endpoint (whatever else is set), the SDK disabled, or the exporter none.
    expect(loadConfig({ OTEL_SERVICE_NAME: 'relay', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      exportTimeoutMs: 10_000,
      serviceName: 'hook-relay',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      scheduleDelayMs: 5000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
    });
    expect(loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://api.honeycomb.io/v1/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=general, x-tenant=a%20b',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-honeycomb-team=traces',
      OTEL_EXPORTER_OTLP_TIMEOUT: '3000',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,service.name=from-resource',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_SDK_DISABLED: 'false',
    }).tracing).toEqual({
      url: 'https://api.honeycomb.io/v1/traces',
      protocol: 'http/json',
      headers: { 'x-honeycomb-team': 'traces', 'x-tenant': 'a b' },
      exportTimeoutMs: 3000,
      serviceName: 'from-resource',
      resourceAttributes: { 'deployment.environment.name': 'prod', 'service.name': 'from-resource' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      scheduleDelayMs: 200,
      maxQueueSize: 100,
      maxExportBatchSize: 100,
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/v1/traces', OTEL_SERVICE_NAME: 'edge', OTEL_RESOURCE_ATTRIBUTES: 'service.name=other' }).tracing?.serviceName).toBe('edge');
    const unusable: Record<string, string> = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_TRACES_SAMPLER: 'jaeger_remote',
      OTEL_TRACES_SAMPLER_ARG: '1.5',
      OTEL_BSP_SCHEDULE_DELAY: 'soon',
      OTEL_SDK_DISABLED: 'maybe',
    };
    for (const [variable, value] of Object.entries(unusable)) {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', [variable]: value };
      expect(() => loadConfig(env), variable).toThrow(new RegExp(`^${variable}=`));
    }
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/4318/);
    // A malformed header list is refused without echoing it: header values are credentials.
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'api-key' })).toThrow(/^OTEL_EXPORTER_OTLP_HEADERS="\(not shown\)"/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'key=%zz-secret' }))
      .toThrow(expect.objectContaining({ message: expect.not.stringContaining('secret') }));
  });
});

describe('docs/configuration.md', () => {
  const doc = readFileSync(CONFIG_DOC, 'utf8');

  it('shows each variable as declared (the tables are generated from config.ts and tracing-config.ts)', () => {
    expect(doc, `docs/configuration.md's tables differ from the declarations: run ${REGENERATE_CONFIG_DOC}`).toBe(withGeneratedTables(doc));
  });

  it('documents every declared variable once, and declares every variable it documents', () => {
    const declared = DOCUMENTED_VARIABLES.flatMap(variableNames);
    expect(new Set(declared).size).toBe(declared.length);
    // Every variable named in the first column of a table, except the section the relay never reads.
    const relaySections = doc.split('\n## Tests and benchmarks only\n')[0]!;
    const documented = [...relaySections.matchAll(/^\| (`[A-Z_]+`(?:, `[A-Z_]+`)*) \|/gm)].flatMap((match) => match[1]!.split(', ').map((name) => name.slice(1, -1)));
    expect(documented.sort()).toEqual([...declared].sort());
  });

  it('gives as default what the docs say: a default text in `code` reads back as the default, an "unset" one is empty', () => {
    const noEnv = envReader({});
    for (const declaration of DOCUMENTED_VARIABLES) {
      const name = variableNames(declaration)[0]!;
      if (declaration.default instanceof DerivedDefault) continue; // its text describes a rule (e.g. "one fewer than the machine's cores")
      const literal = /^`([^`]+)`/.exec(declaration.defaultText)?.[1];
      if (literal !== undefined) expect(declaration.parse(literal, name, noEnv), name).toEqual(declaration.default);
      else if (declaration.defaultText.startsWith('unset')) expect([undefined, null, [], {}], name).toContainEqual(declaration.default);
      else throw new Error(`${name}: a default text should start with the value in backticks or with "unset"`);
    }
  });

  it('fails the comparison when a table and the declarations differ', () => {
    const edited = doc.replace('| `HOOK_PORT` | integer 0–65535 | `8080` |', '| `HOOK_PORT` | integer 0–65535 | `8081` |');
    expect(edited).not.toBe(doc);
    expect(withGeneratedTables(edited)).toBe(doc);
    expect(() => withGeneratedTables(doc.replace('\n## Delivery\n', '\n## Deliveries\n'))).toThrow(/no "## Delivery" heading/);
  });
});

describe('the shared parsers', () => {
  const noEnv = envReader({});
  const message = (parse: Parser<unknown>, value: string): string => {
    try {
      parse(value, 'HOOK_X', noEnv);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error(`${value} was accepted`);
  };

  it('wholeNumber: digits only, in range, with a bound that may come from another variable', () => {
    expect(wholeNumber(0, 10)('10', 'HOOK_X', noEnv)).toBe(10);
    for (const value of ['11', '-1', '1e1', '0x5', '5.0', '+5', 'five']) expect(message(wholeNumber(0, 10), value)).toBe(`HOOK_X=${JSON.stringify(value)} is not valid: expected a whole number from 0 to 10.`);
    expect(message(wholeNumber(1, 10, 'a number of widgets'), '0')).toBe('HOOK_X="0" is not valid: expected a number of widgets.');
    const bounded = wholeNumber(1, (env) => Number(env('HOOK_MAX')));
    expect(bounded('7', 'HOOK_X', envReader({ HOOK_MAX: '7' }))).toBe(7);
    expect(() => bounded('8', 'HOOK_X', envReader({ HOOK_MAX: '7' }))).toThrow('HOOK_X="8" is not valid: expected a whole number from 1 to 7.');
  });

  it('duration, byteSize, oneOf, boolean, onOff and url say what they expected', () => {
    expect(duration(1, 60_000, 'a short duration')('2s', 'HOOK_X', noEnv)).toBe(2000);
    for (const value of ['2', '0s', '2m', '2 s']) expect(message(duration(1, 60_000, 'a short duration'), value)).toBe(`HOOK_X=${JSON.stringify(value)} is not valid: expected a short duration.`);
    expect(byteSize()('2KiB', 'HOOK_X', noEnv)).toBe(2048);
    expect(message(byteSize(), '2 furlongs')).toBe('HOOK_X="2 furlongs" is not valid: expected a positive size in bytes, e.g. 10485760 or 10mb.');
    expect(message(byteSize({ min: 1024, max: 4096, expected: 'a size from 1kb to 4kb' }), '5kb')).toBe('HOOK_X="5kb" is not valid: expected a size from 1kb to 4kb.');
    expect(message(byteSize({ min: 1024, max: 4096, expected: 'a size from 1kb to 4kb' }), '0')).toMatch(/expected a positive size in bytes/);
    expect(oneOf(['red', 'green'], { anyCase: true })('GREEN', 'HOOK_X', noEnv)).toBe('green');
    expect(message(oneOf(['red', 'green']), 'GREEN')).toBe('HOOK_X="GREEN" is not valid: expected red, green.');
    expect(message(oneOf(['red', 'green'], { anyCase: true, expected: 'red or green' }), 'Blue')).toBe('HOOK_X="Blue" is not valid: expected red or green.');
    expect([boolean('YES', 'HOOK_X', noEnv), boolean('0', 'HOOK_X', noEnv), onOff('On', 'HOOK_X', noEnv)]).toEqual([true, false, true]);
    expect(message(boolean, 'on')).toBe('HOOK_X="on" is not valid: expected true or false.');
    expect(message(onOff, 'true')).toBe('HOOK_X="true" is not valid: expected on or off.');
    expect(url(['https:'])('https://a.example/x//', 'HOOK_X', noEnv)).toBe('https://a.example/x');
    expect(url(['https:'], { asGiven: true })('https://a.example/x/', 'HOOK_X', noEnv)).toBe('https://a.example/x/');
    expect(message(url(['http:', 'https:']), 'a.example')).toBe('HOOK_X="a.example" is not valid: expected a URL starting with http: or https://.');
  });

  it('reads the last of several names that is set, or combines them, and parses only what it uses', () => {
    const refusing: Parser<string> = (value, name) => {
      if (value === 'bad') throw new ConfigError(name, value, 'not bad');
      return `${name}:${value}`;
    };
    const pair = variable({ name: ['OTEL_A', 'OTEL_TRACES_A'], section: 'S', format: '', defaultText: '', doc: '', default: 'none', parse: refusing });
    expect(readVariable(pair, envReader({}))).toBe('none');
    expect(readVariable(pair, envReader({ OTEL_A: 'x' }))).toBe('OTEL_A:x');
    expect(readVariable(pair, envReader({ OTEL_A: 'bad', OTEL_TRACES_A: ' y ' }))).toBe('OTEL_TRACES_A:y');
    const both = { ...pair, combine: (values: string[]) => values.join('+') };
    expect(readVariable(both, envReader({ OTEL_A: 'x', OTEL_TRACES_A: 'y' }))).toBe('OTEL_A:x+OTEL_TRACES_A:y');
    expect(() => readVariable(both, envReader({ OTEL_A: 'bad', OTEL_TRACES_A: 'y' }))).toThrow('OTEL_A="bad" is not valid: expected not bad.');
  });
});

describe('loadConfig, between variables', () => {
  it('needs HOOK_SMTP_URL and HOOK_ALERT_EMAIL_FROM together', () => {
    expect(() => loadConfig({ HOOK_SMTP_URL: 'smtp://smtp.example.com' })).toThrow(/^HOOK_ALERT_EMAIL_FROM is not set: with HOOK_SMTP_URL/);
    expect(() => loadConfig({ HOOK_ALERT_EMAIL_FROM: 'alerts@example.com' })).toThrow(/^HOOK_SMTP_URL is not set: HOOK_ALERT_EMAIL_FROM is set/);
    expect(() => loadConfig({ HOOK_SMTP_URL: 'smtp://u:hunter2@', HOOK_ALERT_EMAIL_FROM: 'alerts@example.com' })).toThrow(/^HOOK_SMTP_URL="\(not shown\)" is not valid/);
  });

  it('names which read replica repeats the primary', () => {
    const env = { HOOK_DATABASE_URL: 'postgres://db/hook', HOOK_SECRET_KEY: SECRET_KEY_HEX, HOOK_DATABASE_READ_URL: 'postgres://replica/hook,postgres://db/hook/' };
    expect(() => loadConfig(env)).toThrow(`HOOK_DATABASE_READ_URL="(not shown)" is not valid: expected the URLs of streaming replicas, not HOOK_DATABASE_URL's own primary (URL 2 of 2 is not).`);
  });

  it('reads HOOK_DELIVERY_CONCURRENCY as the whole number the docs promise (no exponent, hex or decimals)', () => {
    for (const value of ['1e3', '0x10', '8.0']) expect(() => loadConfig({ HOOK_DELIVERY_CONCURRENCY: value }), value).toThrow(`HOOK_DELIVERY_CONCURRENCY="${value}" is not valid: expected a whole number from 1 to 10000.`);
  });

  it('reads no other OTEL_* variable while tracing is off (environments set them for every SDK)', () => {
    expect(loadConfig({ OTEL_TRACES_SAMPLER: 'jaeger_remote', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).tracing).toBeNull();
    expect(loadConfig({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }).tracing).toBeNull();
    // The specific endpoint wins, so the general one is not read at all.
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces/', OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }).tracing?.url).toBe('http://c:4318/v1/traces/');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '101' }))
      .toThrow('OTEL_BSP_MAX_EXPORT_BATCH_SIZE="101" is not valid: expected a whole number from 1 to 100.');
  });
});
