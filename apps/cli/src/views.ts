/** How the API's resources read for a person: the views commands hand to the output module. */
import type { AccountDetails, Attempt, BlockedKey, Delivery, Destination, DestinationAuth, DestinationOrdering, DestinationTarget, DestinationTls, Endpoint, Event, EventSummary, SigningSecret } from '@hook/client';
import type { ApiKey, Member } from '@hook/client';
import type { AlertSettings, NotificationSettings } from '@hook/client';
import type { AttemptFinishedMessage, EventReceivedMessage, EventStatus, StreamAttemptDestination } from '@hook/core';
import { HEADERS_NOT_KEPT, isJsonContentType, isSuccessStatus, type VerificationResult } from '@hook/core';
import { bytes, cellText, statusCell, type Block, type Cell, type Line, type Tone, type View } from './output/view.ts';
import { verificationText } from './verification-flags.ts';
import { responseText } from './response-flags.ts';
import { handshakeText } from './handshake-flags.ts';
import { dedupeText } from './dedupe-flags.ts';

/** An ISO timestamp without milliseconds: `2026-11-22T01:23:51Z`. */
export function time(iso: string | null): string {
  return iso === null ? '-' : iso.replace(/\.\d+Z$/, 'Z');
}

export function destinationText(endpoint: Endpoint): string {
  return endpoint.destination.type === 'cli' ? 'cli (events wait for `hook listen`)' : targetText(endpoint.destination);
}

/**
 * Where a destination sends, in one short cell: its URL, `cli`, or a broker's URL and
 * where on it (`amqp://rabbit:5672 exchange orders, routing key order.created`).
 */
export function targetText(target: DestinationTarget): string {
  switch (target.type) {
    case 'cli': return 'cli';
    case 'url': return target.url;
    case 'amqp': return `${target.url} exchange ${target.exchange === '' ? "'' (default)" : target.exchange}, routing key ${target.routing_key}`;
    case 'nats': return `${target.url} subject ${target.subject}`;
    case 'redis': return `${target.url} stream ${target.stream}${target.max_len == null ? '' : ` (about ${target.max_len} entries)`}`;
    case 'mqtt': return `${target.url} topic ${target.topic}`;
  }
}

/** How a destination signs in, never its secret: `bearer token`, `basic (user hook)`, `headers x-api-key`, `oauth2 (client hook, https://auth…)`. */
export function authText(auth: DestinationAuth | null | undefined): string {
  if (!auth) return 'none';
  switch (auth.type) {
    case 'basic': return `basic (user ${auth.username ?? '?'})`;
    case 'bearer': return 'bearer token';
    case 'headers': return `headers ${(auth.header_names ?? []).join(', ')}`;
    case 'oauth2': return `oauth2 (client ${auth.client_id ?? '?'}, ${auth.token_url ?? '?'}${auth.scope ? `, scope ${auth.scope}` : ''}${auth.audience ? `, audience ${auth.audience}` : ''})`;
  }
}

/** A destination's TLS settings: whether it presents a client certificate (mTLS), and whether it trusts its own CA. */
export function tlsText(tls: DestinationTls | null | undefined): string {
  if (!tls) return 'mTLS off';
  const mtls = tls.client_certificate !== null && tls.client_key_set ? 'mTLS on' : tls.client_certificate !== null ? 'mTLS on (no key set)' : 'mTLS off';
  return tls.ca === null ? mtls : `${mtls}, own CA`;
}

/** How an ordered destination orders: `by header x-customer-id, on give up block`; `no` when unordered. */
export function orderingText(ordering: DestinationOrdering | null | undefined): string {
  if (!ordering) return 'no';
  const key = ordering.key === null ? 'one order for every event' : 'header' in ordering.key ? `by header ${ordering.key.header}` : `by JSON field ${ordering.key.json_field}`;
  return `${key}, on give up ${ordering.on_give_up}`;
}

/** A delay in seconds as the flag takes it: `90s`, `5m`, `2h`, `1h30m`; `none`. */
export function delayText(seconds: number | null | undefined): string {
  if (!seconds) return 'none';
  const parts = [[Math.floor(seconds / 3600), 'h'], [Math.floor((seconds % 3600) / 60), 'm'], [seconds % 60, 's']] as const;
  return parts.filter(([amount]) => amount > 0).map(([amount, unit]) => `${amount}${unit}`).join('');
}

/** A destination's status, with why when it is disabled. */
function destinationStatusCell(destination: Destination): Cell {
  const cell = statusCell(destination.status);
  if (destination.disabled_reason === null) return cell;
  return { text: `${destination.status} (${destination.disabled_reason})`, tone: 'bad' };
}

function healthCell(destination: Destination): Cell {
  const { consecutive_failures: failures, failing_since: since } = destination.health;
  if (failures === 0) return { text: 'ok', tone: 'good' };
  return { text: `${failures} failed in a row${since === null ? '' : ` since ${time(since)}`}`, tone: 'bad' };
}

function limitsText(destination: Destination): string {
  const limits = [
    destination.rate_per_second !== null && `${destination.rate_per_second}/s`,
    destination.max_in_flight !== null && `${destination.max_in_flight} in flight`,
  ].filter(Boolean);
  return limits.length === 0 ? '-' : limits.join(', ');
}

/** `hook destinations list`, and the destinations of `hook endpoints get`. */
export function destinationTable(destinations: readonly Destination[]): Block {
  return {
    kind: 'table',
    columns: [{ header: 'Id' }, { header: 'Destination' }, { header: 'Status' }, { header: 'Health' }, { header: 'Limits' }],
    rows: destinations.map((destination) => [destination.id, targetText(destination.destination), destinationStatusCell(destination), healthCell(destination), limitsText(destination)]),
    empty: 'No destinations.',
  };
}

/** `hook destinations add|update`: one destination. */
export function destinationView(destination: Destination): View {
  return [{
    kind: 'fields',
    rows: [
      ['Id', destination.id],
      ['Endpoint', destination.endpoint_id],
      ['Destination', destination.destination.type === 'cli' ? 'cli (events wait for `hook listen`)' : targetText(destination.destination)],
      ['Status', destinationStatusCell(destination)],
      ['Health', healthCell(destination)],
      ['Rate', destination.rate_per_second === null ? 'no limit' : `${destination.rate_per_second} per second`],
      ['Max in flight', destination.max_in_flight === null ? "the relay's share" : String(destination.max_in_flight)],
      ['Transformation', destination.transformation ? `${Buffer.byteLength(destination.transformation.code, 'utf8')} bytes of JavaScript` : 'none'],
      ['Filter', destination.filter ? JSON.stringify(destination.filter) : 'none'],
      ['Auth', authText(destination.auth)],
      ['TLS', tlsText(destination.tls)],
      ['Signature', destination.signature_scheme === 'v1a' ? 'v1a (ed25519)' : 'v1 (HMAC-SHA256)'],
      ...(destination.public_key ? [['Public key', destination.public_key] as const] : []),
      ['Ordered', orderingText(destination.ordering)],
      ['Delay', delayText(destination.delay_seconds)],
      ['Created', time(destination.created_at)],
      ['Updated', time(destination.updated_at)],
    ],
  }];
}

/** `hook destinations blocked`: the keys held by an event that gave up. */
export function blockedKeyTable(keys: readonly BlockedKey[]): Block {
  return {
    kind: 'table',
    columns: [{ header: 'Key' }, { header: 'Held by' }, { header: 'Blocked since' }, { header: 'Waiting', align: 'right' }],
    rows: keys.map((blocked) => [blocked.key === '' ? "'' (no key)" : blocked.key, blocked.event_id, time(blocked.blocked_at), String(blocked.waiting)]),
    empty: 'No blocked keys: every key is delivering.',
  };
}

export function endpointView(endpoint: Endpoint): View {
  return [
    {
      kind: 'fields',
      rows: [
        ['Id', endpoint.id],
        ['Name', endpoint.name],
        ['Status', statusCell(endpoint.status)],
        ['URL', endpoint.url],
        ['Destination', destinationText(endpoint)],
        ['Transformation', endpoint.transformation ? `${Buffer.byteLength(endpoint.transformation.code, 'utf8')} bytes of JavaScript` : 'none'],
        ['Filter', endpoint.filter ? JSON.stringify(endpoint.filter) : 'none'],
        ['Verification', verificationText(endpoint.verification)],
        ['Response', responseText(endpoint.response)],
        ['Handshake', handshakeText(endpoint.handshake)],
        ['Dedupe', dedupeText(endpoint.dedupe)],
        ['Created', time(endpoint.created_at)],
        ['Updated', time(endpoint.updated_at)],
      ],
    },
    { kind: 'heading', text: 'Destinations' },
    destinationTable(endpoint.destinations),
  ];
}

export function endpointTable(endpoints: readonly Endpoint[]): Block {
  return {
    kind: 'table',
    columns: [{ header: 'Id' }, { header: 'Name' }, { header: 'Status' }, { header: 'URL' }, { header: 'Destination' }],
    rows: endpoints.map((endpoint) => [endpoint.id, endpoint.name, statusCell(endpoint.status), endpoint.url, targetText(endpoint.destination)]),
    empty: 'No endpoints yet. Create one with: hook endpoints create <name>',
  };
}

/** `hook endpoints list`: the endpoints, the profile's default one (`hook endpoints use`) marked after its name. */
export function endpointListTable(endpoints: readonly Endpoint[], defaultEndpointId: string | undefined): Block {
  const table = endpointTable(endpoints) as Extract<Block, { kind: 'table' }>;
  return {
    ...table,
    rows: table.rows.map((row, index) => (endpoints[index]!.id === defaultEndpointId ? [row[0]!, { text: `${cellText(row[1]!)} (default)`, tone: 'good' as const }, ...row.slice(2)] : row)),
  };
}

export function secretView(secret: SigningSecret): View {
  const rows: Array<readonly [string, Cell]> = [['Secret', secret.secret]];
  if (secret.previous_secret !== null) {
    rows.push(['Previous secret', secret.previous_secret], ['Previous signs until', time(secret.previous_secret_expires_at)]);
  }
  return [{ kind: 'fields', rows }];
}

/**
 * Events, newest first; `endpointNames` (id → name) shows endpoints by the name a person gave them, else by id.
 * `Last` is the answer of the attempt the relay shows beside each event (last_attempt): its HTTP status, or why none came.
 */
export function eventTable(events: readonly EventSummary[], endpointNames: ReadonlyMap<string, string> = new Map()): Block {
  return {
    kind: 'table',
    columns: [{ header: 'Id' }, { header: 'Received' }, { header: 'Type' }, { header: 'Status' }, { header: 'Attempts', align: 'right' }, { header: 'Last' }, { header: 'Size', align: 'right' }, { header: 'Endpoint' }],
    rows: events.map((event) => [
      event.id, time(event.received_at), event.type ?? '-', statusCell(event.status), String(event.attempt_count), lastAttemptCell(event.last_attempt),
      bytes(event.size), endpointNames.get(event.endpoint_id) ?? event.endpoint_id,
    ]),
    empty: 'No events match.',
  };
}

/** An event list's `Last` cell: `500`, `timeout`, or `-` before any attempt (or from a relay that does not say). */
function lastAttemptCell(last: EventSummary['last_attempt'] | undefined): Cell {
  return last ? answerCell(last.response_status, last.error_class ?? 'no answer') : '-';
}

/** A destination's answer: its HTTP status (green for 2xx, else red), or `noAnswer` in red when none came. */
function answerCell(status: number | null, noAnswer: string): Cell {
  if (status === null) return { text: noAnswer, tone: 'bad' };
  return { text: String(status), tone: isSuccessStatus(status) ? 'good' : 'bad' };
}

/** An attempt's `Result` cell: its status, else the kind of its failure with the relay's words for it (`timeout: no answer within 15000 ms …`). */
function attemptResult(attempt: Attempt): Cell {
  // A relay from before failure_kind leaves it out.
  const kind = attempt.failure_kind ?? null;
  const words = attempt.error ?? 'no answer';
  return answerCell(attempt.response_status, kind === null ? words : `${kind}: ${words}`);
}

export function attemptTable(attempts: readonly Attempt[]): Block {
  return {
    kind: 'table',
    columns: [{ header: '#', align: 'right' }, { header: 'Destination' }, { header: 'Trigger' }, { header: 'Started' }, { header: 'Duration', align: 'right' }, { header: 'Result' }],
    rows: attempts.map((attempt) => [String(attempt.n), attempt.destination_id ?? '-', attempt.trigger, time(attempt.started_at), `${attempt.duration_ms} ms`, attemptResult(attempt)]),
    empty: 'No attempts yet.',
  };
}

/** The event's way to each destination. */
export function deliveryTable(deliveries: readonly Delivery[]): Block {
  return {
    kind: 'table',
    columns: [{ header: 'Destination' }, { header: 'Sends to' }, { header: 'Status' }, { header: 'Attempts', align: 'right' }, { header: 'Next attempt' }],
    rows: deliveries.map((delivery) => [
      delivery.destination_id,
      delivery.destination_deleted_at === null ? targetText(delivery.destination) : `${targetText(delivery.destination)} (deleted)`,
      statusCell(delivery.status),
      String(delivery.attempt_count),
      delivery.next_trigger === 'replay' ? `replay queued${delivery.next_attempt_at === null ? '' : `, ${time(delivery.next_attempt_at)}`}` : time(delivery.next_attempt_at),
    ]),
    empty: 'No deliveries: the event reached no destination.',
  };
}

/**
 * The body for reading: JSON indented (for display only), text as it is, other bytes as
 * base64 with a note. A terminal shows its start (output/body.ts); the note under it
 * names `--body`, which writes all of it.
 */
export function bodyBlocks(event: Event): Block[] {
  const heading = `Body (${event.content_type ?? 'no content type'}, ${bytes(event.size)})`;
  if (event.size === 0) return [{ kind: 'heading', text: heading }, { kind: 'text', text: '(empty)' }];
  const base64 = event.body_encoding === 'base64';
  const json = !base64 && isJsonContentType(event.content_type);
  const whole = `\`hook events get ${event.id} --body > body.${base64 ? 'bin' : json ? 'json' : 'txt'}\` writes all of it`;
  return [
    { kind: 'heading', text: base64 ? `${heading}: not UTF-8 text, shown as base64; \`hook events get ${event.id} --body\` writes the raw bytes` : heading },
    { kind: 'body', text: event.body, json, encoding: event.body_encoding, whole, ...(event.body_truncated ? { totalBytes: event.size } : {}) },
  ];
}

export function eventView(event: Event): View {
  const target = `${event.path || '/'}${event.query ? `?${event.query}` : ''}`;
  return [
    {
      kind: 'fields',
      rows: [
        ['Id', event.id],
        ['Endpoint', event.endpoint_id],
        ['Type', event.type ?? '-'],
        ['Status', statusCell(event.status)],
        ['Received', time(event.received_at)],
        ['Request', `${event.method} ${target}`],
        ['Attempts', String(event.attempt_count)],
        ['Next attempt', time(event.next_attempt_at)],
        ...(event.verification ? [['Signature', verificationResultCell(event.verification)] as const] : []),
        ...(event.dedupe_key ? [['Dedupe key', event.dedupe_key] as const] : []),
      ],
    },
    { kind: 'heading', text: 'Headers' },
    { kind: 'fields', rows: Object.entries(event.headers).map(([name, value]) => [name, value] as const) },
    ...bodyBlocks(event),
    { kind: 'heading', text: 'Deliveries' },
    deliveryTable(event.deliveries),
    { kind: 'heading', text: 'Attempts' },
    attemptTable(event.attempts),
    ...lastExchangeBlocks(event.attempts.at(-1)),
  ];
}

/**
 * One line on what the last attempt sent and what its answer carried, counted, not listed
 * (a terminal view stays short; --json has them): nothing for an attempt that kept neither.
 */
function lastExchangeBlocks(attempt: Attempt | undefined): Block[] {
  if (!attempt || (!attempt.request && !attempt.response_headers)) return [];
  const parts: string[] = [];
  if (attempt.request) {
    const body = attempt.request.body_is_event_body ? "the event's body" : `a transformed body${attempt.request.body_truncated ? ' (its first 4 KiB kept)' : ''}`;
    parts.push(`sent ${headerCount(attempt.request.headers)} and ${body}`);
  }
  if (attempt.response_headers) parts.push(`its answer had ${headerCount(attempt.response_headers)}`);
  return [{ kind: 'text', text: `Last attempt ${parts.join('; ')} (--json: .attempts[-1].request, .response_headers)` }];
}

/** "9 headers", with those the relay did not keep (HEADERS_NOT_KEPT: "3 more headers not kept") counted in. */
function headerCount(headers: Record<string, string>): string {
  const kept = Object.keys(headers).filter((name) => name !== HEADERS_NOT_KEPT).length;
  const more = Number.parseInt(headers[HEADERS_NOT_KEPT] ?? '0', 10) || 0;
  const total = kept + more;
  return `${total} header${total === 1 ? '' : 's'}${more > 0 ? ` (${kept} kept)` : ''}`;
}

function limitText(limit: number | null, unit: string): string {
  return limit === null ? 'unlimited' : `${limit.toLocaleString('en-US')} ${unit}`;
}

/** The account's custom domain and whether it is in effect yet. */
function customDomainCell(account: AccountDetails['account']): Cell {
  if (!account.custom_domain) return { text: 'none', tone: 'dim' };
  return account.custom_domain_status === 'verified'
    ? `${account.custom_domain} (verified)`
    : { text: `${account.custom_domain} (pending: not in use until verified)`, tone: 'warn' };
}

/** While the custom domain is pending: the DNS record that proves it, and the command that checks it. */
export function customDomainRecordView(account: AccountDetails['account']): View {
  const record = account.custom_domain_verification;
  if (!record) return [];
  return [
    { kind: 'heading', text: `Prove you control ${account.custom_domain}: add this DNS record, then run \`hook account verify-domain\`` },
    { kind: 'fields', rows: [['Type', record.type], ['Name', record.name], ['Value', record.value]] },
  ];
}

/** `hook account get`, `plan` and `update`: the account, its plan's limits, this month's usage and its plan history. */
export function accountView(details: AccountDetails): View {
  const { account, limits, usage, plan_history: history } = details;
  return [
    {
      kind: 'fields',
      rows: [
        ['Account', account.id],
        ['Plan', account.plan],
        ['Email', account.email ?? { text: 'none', tone: 'dim' }],
        ['Allowed IPs', account.allowed_ips?.length ? account.allowed_ips.join(', ') : { text: 'any address', tone: 'dim' }],
        ['Custom domain', customDomainCell(account)],
        ['Created', time(account.created_at)],
        ['Events per month', limitText(limits.events_per_month, 'events')],
        ['Endpoints', limitText(limits.endpoints, 'endpoints')],
        ['Members', limitText(limits.members, 'members')],
        ['Retention', limitText(limits.retention_days, 'days')],
        ['API requests', `${limitText(limits.api_requests_per_minute, 'per minute')} per key`],
        ['Transformation CPU', `${(limits.transformation_cpu_ms_per_minute / 1000).toLocaleString('en-US')} s per minute`],
      ],
    },
    ...customDomainRecordView(account),
    { kind: 'heading', text: `Usage in ${usage.month} (UTC)` },
    {
      kind: 'fields',
      rows: [
        ['Events accepted', usage.events_remaining === null
          ? usage.events_accepted.toLocaleString('en-US')
          : `${usage.events_accepted.toLocaleString('en-US')} (${usage.events_remaining.toLocaleString('en-US')} left until ${time(usage.resets_at)})`],
        ['Endpoints', String(usage.endpoints)],
        ['Members', String(usage.members)],
        ['Transformation CPU', `${(usage.transformation_cpu_ms / 1000).toLocaleString('en-US')} s`],
      ],
    },
    { kind: 'heading', text: 'Plan history' },
    {
      kind: 'table',
      columns: [{ header: 'CHANGED' }, { header: 'FROM' }, { header: 'TO' }],
      rows: history.map((change) => [time(change.changed_at), change.from_plan, change.to_plan]),
      empty: 'No plan changes yet.',
    },
  ];
}

/** `hook members add`, `hook members role`: one member. */
export function memberView(member: Member): View {
  return [{
    kind: 'fields',
    rows: [
      ['Member', member.id],
      ['Email', member.email ?? { text: 'none', tone: 'dim' }],
      ['Role', member.role],
      ['Added', time(member.created_at)],
    ],
  }];
}

/** `hook members list`. */
export function memberTable(members: readonly Member[]): Block {
  return {
    kind: 'table',
    columns: [{ header: 'ID' }, { header: 'EMAIL' }, { header: 'ROLE' }, { header: 'ADDED' }],
    rows: members.map((member) => [member.id, member.email ?? { text: '-', tone: 'dim' }, member.role, time(member.created_at)]),
    empty: 'No members.',
  };
}

/** `hook api-keys create`: the key's record (the key itself is printed beside it, once). */
export function apiKeyView(key: ApiKey): View {
  return [{
    kind: 'fields',
    rows: [
      ['Key', key.id],
      ['Name', key.name ?? { text: 'none', tone: 'dim' }],
      ['Prefix', key.prefix],
      ['Member', key.member_id],
      ['Created', time(key.created_at)],
    ],
  }];
}

/** `hook api-keys list`. */
export function apiKeyTable(keys: readonly ApiKey[]): Block {
  return {
    kind: 'table',
    columns: [{ header: 'ID' }, { header: 'NAME' }, { header: 'PREFIX' }, { header: 'MEMBER' }, { header: 'CREATED' }],
    rows: keys.map((key) => [key.id, key.name ?? { text: '-', tone: 'dim' }, key.prefix, key.member_id, time(key.created_at)]),
    empty: 'No API keys.',
  };
}

/** `hook notifications get|set`: where the account's notifications go. */
export function notificationSettingsView(settings: NotificationSettings): View {
  return [{
    kind: 'fields',
    rows: [
      ['URL', settings.url],
      ['Status', statusCell(settings.status)],
      ['Secret', settings.secret ?? '(admins only)'],
      ['Created', time(settings.created_at)],
      ['Updated', time(settings.updated_at)],
    ],
  }];
}

/** `hook alerts get|set|clear`: the channels, then the latest alerts. */
export function alertSettingsView(settings: AlertSettings): View {
  const email = settings.email.to.length > 0 ? settings.email.to.join(', ') : settings.email.available ? '(none)' : '(none: this relay sends no email)';
  return [
    {
      kind: 'fields',
      rows: [
        ['Slack', settings.slack ? settings.slack.url_hint : '(none)'],
        ['Email', email],
        ['Alerts on', settings.types.join(', ')],
      ],
    },
    {
      kind: 'table',
      columns: [{ header: 'Channel' }, { header: 'Type' }, { header: 'Status' }, { header: 'Tries', align: 'right' }, { header: 'Created' }, { header: 'Last error' }],
      rows: settings.recent.map((alert) => [alert.channel, alert.type, alert.status === 'sent' ? { text: 'sent', tone: 'good' } : statusCell(alert.status), String(alert.attempts), time(alert.created_at), alert.last_error ?? '']),
      empty: 'No alerts sent yet; `hook alerts test` sends one to each channel.',
    },
  ];
}

const TAIL_STATUS_TONES: Record<EventStatus, Tone> = { delivered: 'good', failed: 'bad', retrying: 'warn', pending: 'dim', filtered: 'dim' };
/** Width of the status word in tail lines (`delivered`, `received`), so the event ids line up. */
const TAIL_STATUS_WIDTH = 9;

function requestTarget(event: { method: string; path: string; query: string }): string {
  return `${event.method} ${event.path || '/'}${event.query ? `?${event.query}` : ''}`;
}

/** An event's signature check: `github verified`, or `stripe unverified: no signature matches`. */
export function verificationResultCell(result: VerificationResult): Cell {
  return result.verified
    ? { text: `${result.provider} verified`, tone: 'good' }
    : { text: `${result.provider} unverified: ${(result.reason ?? '').replace(/_/g, ' ')}`, tone: 'bad' };
}

/**
 * `hook events tail`: one line per message, what matters first (a terminal cuts the end):
 * time, what happened, event id, endpoint name, then the details.
 *
 *   12:36:11  received   evt_01M8…  orders  order.created  POST /hooks?x=1  24 B
 *   12:36:12  retrying   evt_01M8…  500  12 ms  orders → api.example.com  attempt 1 (auto)
 *   12:36:12  delivered  evt_01M8…  200  9 ms  orders → hook listen  attempt 1 (listen)  event retrying
 *
 * An attempt line's status is its own delivery's (the event's way to that destination);
 * when the event's differs (another destination still pending or failing) it follows.
 * From a relay that does not name destinations, the event's status and no destination.
 */
export function tailLine(message: EventReceivedMessage | AttemptFinishedMessage, endpointName: string): Line {
  if (message.type === 'event.received') {
    const { event } = message;
    const line: Cell[] = [{ at: event.received_at }, 'received'.padEnd(TAIL_STATUS_WIDTH), event.id, endpointName, event.type ?? '-', requestTarget(event), bytes(event.size)];
    if (event.verification) line.push(verificationResultCell(event.verification));
    return line;
  }
  const { attempt } = message;
  const status = message.status ?? message.event_status;
  const line: Cell[] = [
    { at: attempt.started_at },
    { text: status.padEnd(TAIL_STATUS_WIDTH), tone: TAIL_STATUS_TONES[status] },
    message.event_id,
    answerCell(attempt.response_status, 'ERR'),
    `${Math.round(attempt.duration_ms)} ms`,
    message.destination ? `${endpointName} → ${destinationLabel(message.destination)}` : endpointName,
    `attempt ${attempt.n} (${attempt.trigger})`,
  ];
  if (message.event_status !== status) line.push({ text: `event ${message.event_status}`, tone: TAIL_STATUS_TONES[message.event_status] });
  if (attempt.error) line.push(attempt.error);
  return line;
}

/** How a person tells destinations apart (they have no names): a URL's host (with its port), or `hook listen`. */
export function destinationLabel(destination: StreamAttemptDestination | DestinationTarget): string {
  if (destination.type === 'cli') return 'hook listen';
  return URL.parse(destination.url)?.host ?? destination.url;
}

/** `hook events tail`: an event received while the stream was down (caught up on reconnect), with the status it has now. */
export function missedEventLine(event: EventSummary, endpointName: string): Line {
  return [
    { at: event.received_at },
    { text: event.status.padEnd(TAIL_STATUS_WIDTH), tone: TAIL_STATUS_TONES[event.status] },
    event.id,
    endpointName,
    event.type ?? '-',
    requestTarget(event),
    bytes(event.size),
    ...(event.verification ? [verificationResultCell(event.verification)] : []),
  ];
}
