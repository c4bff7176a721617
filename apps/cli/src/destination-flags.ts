/**
 * A destination's target and options from flags (docs/delivery.md): where it sends (a URL,
 * `hook listen`, or a broker), how it signs in, its client certificate, signature scheme,
 * ordering and delay. Shared by `hook destinations add` and `hook destinations update`;
 * `clearable` (update) adds the --no-… flags that remove an option.
 */
import { Option, type Command } from 'commander';
import { ORDERING_ON_GIVE_UP, SIGNATURE_SCHEMES, type OrderingOnGiveUp } from '@hook/core';
import type { DestinationAuthInput, DestinationOrderingInput, DestinationTarget, DestinationTlsInput, DestinationUpdate, SignatureScheme } from '@hook/client';
import { readOptionFile } from './endpoint-rules.ts';
import { UsageError } from './errors.ts';
import { collectHeader, parseBrokerUrl, parseDelaySeconds, parseHttpUrl, parseKeyField, parseKeyHeader, parsePositiveWholeNumber } from './option-parsers.ts';

export interface TargetFlags {
  url?: string;
  cli?: boolean;
  amqp?: string;
  exchange?: string;
  routingKey?: string;
  nats?: string;
  subject?: string;
  redis?: string;
  stream?: string;
  maxLen?: number;
  mqtt?: string;
  topic?: string;
}

export interface OptionFlags {
  authBasic?: string;
  authBearer?: string;
  authHeader?: Array<[string, string]>;
  oauth2TokenUrl?: string;
  oauth2ClientId?: string;
  oauth2ClientSecret?: string;
  oauth2Scope?: string;
  oauth2Audience?: string;
  /** false from `--no-auth` (commander makes it true when the flag is absent). */
  auth?: boolean;
  clientCert?: string;
  clientKey?: string;
  ca?: string;
  /** false from `--no-tls`. */
  tls?: boolean;
  signature?: SignatureScheme;
  ordered?: boolean;
  orderKeyHeader?: string;
  orderKeyField?: string;
  onGiveUp?: OrderingOnGiveUp;
  /** false from `--no-ordering`. */
  ordering?: boolean;
  /** Seconds; false from `--no-delay`. */
  delay?: number | false;
}

/** Where a flag's secret value comes from stdin instead of the command line. */
const FROM_STDIN = '-';

/**
 * Each broker: its flag, the flags that must go with it (and the field each fills), and
 * an example for the error when one is missing.
 */
const BROKERS = [
  { type: 'amqp', flag: '--amqp', schemes: ['amqp', 'amqps'], companions: [['exchange', '--exchange <name>', 'exchange'], ['routingKey', '--routing-key <key>', 'routing_key']], example: "--amqp amqp://rabbit.internal:5672 --exchange orders --routing-key order.created (--exchange '' for the default exchange)" },
  { type: 'nats', flag: '--nats', schemes: ['nats', 'tls'], companions: [['subject', '--subject <subject>', 'subject']], example: '--nats nats://nats.internal:4222 --subject orders.created' },
  { type: 'redis', flag: '--redis', schemes: ['redis', 'rediss'], companions: [['stream', '--stream <name>', 'stream']], example: '--redis redis://redis.internal:6379/0 --stream orders' },
  { type: 'mqtt', flag: '--mqtt', schemes: ['mqtt', 'mqtts'], companions: [['topic', '--topic <topic>', 'topic']], example: '--mqtt mqtt://mqtt.internal:1883 --topic orders/created' },
] as const satisfies ReadonlyArray<{ type: string; flag: string; schemes: readonly string[]; companions: ReadonlyArray<readonly [keyof TargetFlags, string, string]>; example: string }>;

/** Adds the target flags: --url, --cli and one flag per broker with the flags that go with it. */
export function addTargetOptions(command: Command, verb: 'deliver' | 'send'): Command {
  command
    .addOption(new Option('--url <url>', `${verb} to this http(s) URL, signed, with retries`).argParser(parseHttpUrl))
    .addOption(new Option('--cli', 'hold events for `hook listen`'))
    .addOption(new Option('--amqp <url>', 'publish each event to RabbitMQ (AMQP 0-9-1) at this amqp:// or amqps:// URL; with --exchange and --routing-key').argParser(parseBrokerUrl(['amqp', 'amqps'], 'amqp://rabbit.internal:5672')))
    .option('--exchange <name>', "amqp: the exchange to publish to ('' is the default exchange)")
    .option('--routing-key <key>', 'amqp: the routing key each message is published with')
    .addOption(new Option('--nats <url>', 'publish each event to NATS JetStream at this nats:// or tls:// URL; with --subject').argParser(parseBrokerUrl(['nats', 'tls'], 'nats://nats.internal:4222')))
    .option('--subject <subject>', 'nats: the subject each message is published to (a stream must capture it)')
    .addOption(new Option('--redis <url>', 'add each event to a Redis stream at this redis:// or rediss:// URL; with --stream').argParser(parseBrokerUrl(['redis', 'rediss'], 'redis://redis.internal:6379/0')))
    .option('--stream <name>', 'redis: the stream each message is added to (XADD)')
    .option('--max-len <n>', 'redis: trim the stream to about n entries (default: no cap)', parsePositiveWholeNumber)
    .addOption(new Option('--mqtt <url>', 'publish each event to MQTT (QoS 1) at this mqtt:// or mqtts:// URL; with --topic').argParser(parseBrokerUrl(['mqtt', 'mqtts'], 'mqtt://mqtt.internal:1883')))
    .option('--topic <topic>', 'mqtt: the topic each message is published to (no wildcards)');
  return command;
}

/** Every target flag the command line used, as written. */
function targetFlagsGiven(flags: TargetFlags): string[] {
  return [
    flags.url !== undefined && '--url',
    flags.cli === true && '--cli',
    ...BROKERS.map((broker) => flags[broker.type] !== undefined && broker.flag),
  ].filter((flag): flag is string => typeof flag === 'string');
}

/** The `destination` field the flags give, or undefined when no target flag was given. */
export function targetFromFlags(flags: TargetFlags): DestinationTarget | undefined {
  const given = targetFlagsGiven(flags);
  if (given.length > 1) {
    throw new UsageError(`${given.join(' and ')} can't be used together`, 'A destination sends to one place: give one of --url, --cli, --amqp, --nats, --redis or --mqtt.');
  }
  const broker = BROKERS.find((candidate) => flags[candidate.type] !== undefined);
  for (const other of BROKERS) {
    if (other === broker) continue;
    for (const [name, flag] of other.companions) {
      if (flags[name] !== undefined) throw new UsageError(`${flag.split(' ')[0]} goes with ${other.flag} <url>`, `Give the broker too, e.g. ${other.example}.`);
    }
  }
  if (flags.maxLen !== undefined && broker?.type !== 'redis') throw new UsageError('--max-len goes with --redis <url>', `Give the broker too, e.g. ${BROKERS[2].example} --max-len 100000.`);
  if (flags.url !== undefined) return { type: 'url', url: flags.url };
  if (flags.cli) return { type: 'cli' };
  if (!broker) return undefined;
  const missing = broker.companions.filter(([name]) => flags[name] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`${broker.flag} needs ${missing.map(([, flag]) => flag).join(' and ')}`, `Say where on the broker each event goes, e.g. ${broker.example}.`);
  }
  const url = flags[broker.type]!;
  switch (broker.type) {
    case 'amqp': return { type: 'amqp', url, exchange: flags.exchange!, routing_key: flags.routingKey! };
    case 'nats': return { type: 'nats', url, subject: flags.subject! };
    case 'redis': return { type: 'redis', url, stream: flags.stream!, ...(flags.maxLen !== undefined ? { max_len: flags.maxLen } : {}) };
    case 'mqtt': return { type: 'mqtt', url, topic: flags.topic! };
  }
}

/** Adds the option flags (auth, TLS, signature, ordering, delay); `clearable` adds --no-auth, --no-tls, --no-ordering and --no-delay (update). */
export function addDestinationOptions(command: Command, clearable: boolean): Command {
  command
    .option('--auth-basic <user:password>', 'sign in with HTTP Basic auth (a broker: its user and password); user:- reads the password from stdin')
    .option('--auth-bearer <token>', 'send Authorization: Bearer <token>; - reads the token from stdin')
    .option('--auth-header <header>', "send this static header with every delivery, 'Name: value' (repeatable); 'Name: -' reads the value from stdin", collectHeader)
    .addOption(new Option('--oauth2-token-url <url>', 'sign in with OAuth2 client credentials from this token endpoint; with --oauth2-client-id and --oauth2-client-secret').argParser(parseHttpUrl))
    .option('--oauth2-client-id <id>', 'oauth2: the client id')
    .option('--oauth2-client-secret <secret>', 'oauth2: the client secret; - reads it from stdin')
    .option('--oauth2-scope <scope>', 'oauth2: the scope to ask for')
    .option('--oauth2-audience <audience>', 'oauth2: the audience to ask for');
  if (clearable) command.option('--no-auth', 'stop signing in to the receiver (its secret is forgotten)');
  command
    .option('--client-cert <file>', 'mTLS: present the client certificate in this PEM file (its chain after it); with --client-key')
    .option('--client-key <file>', 'mTLS: the private key of --client-cert, a PEM file')
    .option('--ca <file>', 'trust the CA certificates in this PEM file for the receiver, instead of the public ones');
  if (clearable) command.option('--no-tls', 'remove the client certificate, key and CA');
  command
    .addOption(new Option('--signature <scheme>', 'v1: HMAC-SHA256 with a whsec_ secret (default); v1a: ed25519, receivers verify with the public key').choices(SIGNATURE_SCHEMES))
    .option('--ordered', 'deliver in order: an event is not attempted until the one before it succeeded or gave up')
    .option('--order-key-header <name>', 'deliver in order per value of this header (events with different values go side by side)', parseKeyHeader)
    .option('--order-key-field <path>', 'deliver in order per value of this JSON body field, dotted for a nested one', parseKeyField)
    .addOption(new Option('--on-give-up <action>', 'ordered: when an event fails all its attempts, block its key until you replay it or `hook destinations unblock` (default), or skip to the next').choices(ORDERING_ON_GIVE_UP));
  if (clearable) command.option('--no-ordering', 'deliver unordered again');
  command.option('--delay <duration>', 'hold each event this long before its first attempt: seconds (90) or 90s, 5m, 2h, at most 24h', parseDelaySeconds);
  if (clearable) command.option('--no-delay', 'deliver each event at once again');
  return command;
}

/** Reads a secret given as `-` from stdin, once per run. */
export type SecretReader = (flag: string) => Promise<string>;

/** The `auth` field the flags give (null removes it), or undefined when no auth flag was given. */
async function authFromFlags(flags: OptionFlags, readSecret: SecretReader): Promise<DestinationAuthInput | null | undefined> {
  const oauth2 = [flags.oauth2TokenUrl, flags.oauth2ClientId, flags.oauth2ClientSecret, flags.oauth2Scope, flags.oauth2Audience].some((value) => value !== undefined);
  const given = [
    flags.authBasic !== undefined && '--auth-basic',
    flags.authBearer !== undefined && '--auth-bearer',
    flags.authHeader !== undefined && '--auth-header',
    oauth2 && '--oauth2-…',
  ].filter((flag): flag is string => typeof flag === 'string');
  if (flags.auth === false) {
    if (given.length > 0) throw new UsageError(`--no-auth can't be used with ${given.join(', ')}`, 'Either remove the auth with --no-auth, or set a new one alone (it replaces the old).');
    return null;
  }
  if (given.length > 1) {
    throw new UsageError(`${given.join(' and ')} can't be used together`, 'A destination signs in one way: give one of --auth-basic, --auth-bearer, --auth-header (repeatable) or the --oauth2-… flags.');
  }
  const fromStdin = [
    flags.authBasic?.endsWith(`:${FROM_STDIN}`) && '--auth-basic',
    flags.authBearer === FROM_STDIN && '--auth-bearer',
    flags.authHeader?.some(([, value]) => value === FROM_STDIN) && '--auth-header',
    flags.oauth2ClientSecret === FROM_STDIN && '--oauth2-client-secret',
  ].filter((flag): flag is string => typeof flag === 'string');
  if (fromStdin.length > 1 || (flags.authHeader?.filter(([, value]) => value === FROM_STDIN).length ?? 0) > 1) {
    throw new UsageError('Only one secret can be read from stdin', 'Give one secret as -, the others on the command line.');
  }
  const secretOf = (value: string, flag: string) => (value === FROM_STDIN ? readSecret(flag) : Promise.resolve(value));

  if (flags.authBasic !== undefined) {
    const colon = flags.authBasic.indexOf(':');
    if (colon === -1) throw new UsageError('--auth-basic takes user:password', 'Write the user, a colon, then the password (--auth-basic alice:s3cret), or user:- to read the password from stdin.');
    return { type: 'basic', username: flags.authBasic.slice(0, colon), password: await secretOf(flags.authBasic.slice(colon + 1), '--auth-basic') };
  }
  if (flags.authBearer !== undefined) return { type: 'bearer', token: await secretOf(flags.authBearer, '--auth-bearer') };
  if (flags.authHeader !== undefined) {
    const headers: Record<string, string> = {};
    for (const [name, value] of flags.authHeader) headers[name] = await secretOf(value, '--auth-header');
    return { type: 'headers', headers };
  }
  if (oauth2) {
    const missing = [
      flags.oauth2TokenUrl === undefined && '--oauth2-token-url <url>',
      flags.oauth2ClientId === undefined && '--oauth2-client-id <id>',
      flags.oauth2ClientSecret === undefined && '--oauth2-client-secret <secret>',
    ].filter((flag): flag is string => typeof flag === 'string');
    if (missing.length > 0) {
      throw new UsageError(`OAuth2 needs ${missing.join(' and ')}`, 'Give all three, e.g. --oauth2-token-url https://auth.example.com/oauth/token --oauth2-client-id relay --oauth2-client-secret - (the secret from stdin).');
    }
    return {
      type: 'oauth2',
      token_url: flags.oauth2TokenUrl!,
      client_id: flags.oauth2ClientId!,
      client_secret: await secretOf(flags.oauth2ClientSecret!, '--oauth2-client-secret'),
      ...(flags.oauth2Scope !== undefined ? { scope: flags.oauth2Scope } : {}),
      ...(flags.oauth2Audience !== undefined ? { audience: flags.oauth2Audience } : {}),
    };
  }
  return undefined;
}

/** A PEM file named by a flag: its text, or a usage error naming the flag when it cannot be read or is not PEM. */
async function readPem(path: string, flag: string): Promise<string> {
  const text = await readOptionFile(path, flag);
  if (!text.includes('-----BEGIN ')) throw new UsageError(`${flag} ${path} is not a PEM file`, `Give ${flag} a PEM file (text starting -----BEGIN …); convert a DER file with openssl x509 -inform der -in <file> -out <file>.pem.`);
  return text;
}

/**
 * The `tls` field the flags give (null removes it), or undefined when no TLS flag was given.
 * A new destination takes a client certificate and its key together; an update may replace
 * one alone (a renewed certificate for the same key), the relay keeping the other.
 */
async function tlsFromFlags(flags: OptionFlags, clearable: boolean): Promise<DestinationTlsInput | null | undefined> {
  const given = [flags.clientCert !== undefined && '--client-cert', flags.clientKey !== undefined && '--client-key', flags.ca !== undefined && '--ca']
    .filter((flag): flag is string => typeof flag === 'string');
  if (flags.tls === false) {
    if (given.length > 0) throw new UsageError(`--no-tls can't be used with ${given.join(', ')}`, 'Either remove the TLS settings with --no-tls, or set new ones alone.');
    return null;
  }
  if (given.length === 0) return undefined;
  if (!clearable && (flags.clientCert === undefined) !== (flags.clientKey === undefined)) {
    throw new UsageError(`${flags.clientCert === undefined ? '--client-key needs --client-cert <file>' : '--client-cert needs --client-key <file>'}`, 'mTLS takes the certificate and its key together: --client-cert client.pem --client-key client-key.pem.');
  }
  return {
    ...(flags.clientCert !== undefined ? { client_certificate: await readPem(flags.clientCert, '--client-cert') } : {}),
    ...(flags.clientKey !== undefined ? { client_key: await readPem(flags.clientKey, '--client-key') } : {}),
    ...(flags.ca !== undefined ? { ca: await readPem(flags.ca, '--ca') } : {}),
  };
}

/**
 * The `ordering` field the flags give (null: unordered), or undefined when no ordering
 * flag was given. `--ordered` alone is one order for every event; a key flag implies
 * ordered. `--on-give-up` alone changes only that (update) and needs an ordering flag on add.
 */
function orderingFromFlags(flags: OptionFlags, clearable: boolean): DestinationOrderingInput | null | undefined {
  const given = [
    flags.ordered === true && '--ordered',
    flags.orderKeyHeader !== undefined && '--order-key-header',
    flags.orderKeyField !== undefined && '--order-key-field',
    flags.onGiveUp !== undefined && '--on-give-up',
  ].filter((flag): flag is string => typeof flag === 'string');
  if (flags.ordering === false) {
    if (given.length > 0) throw new UsageError(`--no-ordering can't be used with ${given.join(', ')}`, 'Either deliver unordered with --no-ordering, or set the ordering alone.');
    return null;
  }
  if (flags.orderKeyHeader !== undefined && flags.orderKeyField !== undefined) {
    throw new UsageError('--order-key-header and --order-key-field can\'t be used together', 'Events are ordered by one key: give --order-key-header <name> for a header or --order-key-field <path> for a JSON field.');
  }
  if (given.length === 0) return undefined;
  const key = flags.orderKeyHeader !== undefined ? { header: flags.orderKeyHeader } : flags.orderKeyField !== undefined ? { json_field: flags.orderKeyField } : flags.ordered ? null : undefined;
  if (key === undefined && !clearable) {
    throw new UsageError('--on-give-up goes with ordered delivery', 'Add --ordered (one order for every event), --order-key-header <name> or --order-key-field <path>.');
  }
  return { ...(key !== undefined ? { key } : {}), ...(flags.onGiveUp !== undefined ? { on_give_up: flags.onGiveUp } : {}) };
}

/** The option fields the flags give (auth, tls, signature_scheme, ordering, delay_seconds); fields not given are left out. */
export async function optionsFromFlags(flags: OptionFlags, readSecret: SecretReader, clearable: boolean): Promise<Pick<DestinationUpdate, 'auth' | 'tls' | 'signature_scheme' | 'ordering' | 'delay_seconds'>> {
  const ordering = orderingFromFlags(flags, clearable);
  const tls = await tlsFromFlags(flags, clearable);
  const auth = await authFromFlags(flags, readSecret);
  return {
    ...(auth !== undefined ? { auth } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(flags.signature !== undefined ? { signature_scheme: flags.signature } : {}),
    ...(ordering !== undefined ? { ordering } : {}),
    ...(flags.delay !== undefined ? { delay_seconds: flags.delay === false ? null : flags.delay } : {}),
  };
}

/** Reads one secret from stdin (`--auth-bearer -`): all of it, without the line break a shell or file ends it with. */
export function stdinSecretReader(stdin: NodeJS.ReadableStream & { isTTY?: boolean }, note: (text: string) => void): SecretReader {
  return async (flag) => {
    if (stdin.isTTY) note(`Reading ${flag}'s secret from stdin; end it with Ctrl-D.`);
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const secret = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
    if (secret.length === 0) throw new UsageError(`${flag} - read nothing from stdin`, `Pipe the secret into the command (printf %s "$TOKEN" | …), or give the value after ${flag}.`);
    return secret;
  };
}
