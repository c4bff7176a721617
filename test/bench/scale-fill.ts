/**
 * The history `npm run bench:scale` measures against (scale.ts), written straight into
 * PostgreSQL with INSERT … SELECT generate_series through the partitioned parents `event`,
 * `delivery` and `attempt` (so every row is routed to its retention class and period
 * like ingest's): the accounts' shapes (SCALE_ACCOUNTS), the leaves made first with
 * hook_ensure_history_partitions (migration 019), then one statement per (account, day,
 * chunk), days in order, writing the events, their deliveries and attempts together, on
 * two connections.
 *
 * Every event gets a 1 KiB JSON body; its id begins with its receive time (as newId makes
 * them: Crockford base32 of the millisecond, then 16 characters that keep ids unique);
 * one or two deliveries (one per destination of its endpoint) and their attempts: about 2%
 * of events failed (7 attempts on the first destination), 0.5% retrying (3 attempts, next
 * attempt in about 12 h, so nothing falls due during the bench), the rest delivered (one
 * attempt each).
 */
import pg from 'pg';

export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** At most this many events per statement: a statement is a short transaction and progress shows. */
const CHUNK_EVENTS = 100_000;

/** Where an account's events fall: received uniformly over the last `days`, or from `daysBeforeToday` days before today's UTC midnight. */
export type Window = { kind: 'last'; days: number } | { kind: 'sinceMidnight'; daysBeforeToday: number };

export interface AccountShape {
  label: string;
  plan: 'free' | 'pro' | 'enterprise';
  /** An enterprise account's own retention. */
  retentionDays: number | null;
  /** The retention class its events are stored in (partitions.ts retentionClassSql). */
  retentionClass: number;
  /** Share of the events, per ten thousand. */
  share: number;
  window: Window;
  /** Share of the account's events per endpoint, per ten thousand (sums to 10,000), and whether each endpoint has a second destination. */
  endpoints: { share: number; twoDestinations: boolean }[];
}

const ENDPOINTS_BIG = [
  { share: 4000, twoDestinations: true },
  { share: 3000, twoDestinations: false },
  { share: 1500, twoDestinations: true },
  { share: 800, twoDestinations: false },
  { share: 500, twoDestinations: true },
  // the 2% endpoint: none of its events is retrying (the bench's "endpoint + a status none of its events has")
  { share: 200, twoDestinations: false },
];
const ENDPOINTS_SMALL = [
  { share: 6000, twoDestinations: true },
  { share: 3000, twoDestinations: false },
  { share: 1000, twoDestinations: false },
];

/**
 * Ten accounts. The first (pro, class 90) holds 60% of the events over 80 days. Class 7
 * accounts hold only what a week's retention keeps (from 6 days before today's midnight,
 * so none of their leaves expires during the run: the bench drops them on purpose), the
 * class 30 account 25 days (its oldest leaf expires 6 days from today).
 */
export const SCALE_ACCOUNTS: AccountShape[] = [
  { label: 'A0 pro (6 M)', plan: 'pro', retentionDays: null, retentionClass: 90, share: 6000, window: { kind: 'last', days: 80 }, endpoints: ENDPOINTS_BIG },
  { label: 'A1 pro', plan: 'pro', retentionDays: null, retentionClass: 90, share: 1000, window: { kind: 'last', days: 80 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A2 enterprise', plan: 'enterprise', retentionDays: null, retentionClass: 365, share: 1000, window: { kind: 'last', days: 80 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A3 enterprise, 7 days', plan: 'enterprise', retentionDays: 7, retentionClass: 7, share: 700, window: { kind: 'sinceMidnight', daysBeforeToday: 6 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A4 enterprise, 30 days', plan: 'enterprise', retentionDays: 30, retentionClass: 30, share: 500, window: { kind: 'sinceMidnight', daysBeforeToday: 25 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A5 pro', plan: 'pro', retentionDays: null, retentionClass: 90, share: 400, window: { kind: 'last', days: 80 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A6 pro', plan: 'pro', retentionDays: null, retentionClass: 90, share: 385, window: { kind: 'last', days: 80 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A7 free', plan: 'free', retentionDays: null, retentionClass: 7, share: 5, window: { kind: 'sinceMidnight', daysBeforeToday: 6 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A8 free', plan: 'free', retentionDays: null, retentionClass: 7, share: 5, window: { kind: 'sinceMidnight', daysBeforeToday: 6 }, endpoints: ENDPOINTS_SMALL },
  { label: 'A9 free', plan: 'free', retentionDays: null, retentionClass: 7, share: 5, window: { kind: 'sinceMidnight', daysBeforeToday: 6 }, endpoints: ENDPOINTS_SMALL },
];

/** Event types: the first takes 14% of an account's events, the other nine share the rest. */
export const EVENT_TYPES = [
  'invoice.paid', 'invoice.created', 'invoice.finalized', 'customer.created', 'customer.updated',
  'charge.succeeded', 'charge.refunded', 'payment_intent.succeeded', 'payment_intent.created', 'checkout.session.completed',
];
/** Upper bounds (per ten thousand) of each type but the last, for width_bucket. */
const TYPE_BOUNDS = [1400, 2356, 3312, 4268, 5224, 6180, 7136, 8092, 9048];
/** Per ten thousand events: failed below FAILED, retrying below RETRYING. */
const FAILED = 200;
const RETRYING = 250;
/** Emails in bodies: `user<g % 100>@example.com`, so each one is in 1% of events. */
export const SEARCH_HIT = 'user42@example.com';

/** What the fill made, for the bench's set-up and report. */
export interface FilledAccount {
  shape: AccountShape;
  accountId: string;
  endpointIds: string[];
  /** First destination of each endpoint, and the second where there is one. */
  firstDestinations: string[];
  secondDestinations: (string | null)[];
  events: number;
  startMs: number;
  endMs: number;
}

export function windowStart(window: Window, nowMs: number): number {
  if (window.kind === 'last') return nowMs - window.days * DAY_MS;
  return Math.floor(nowMs / DAY_MS) * DAY_MS - window.daysBeforeToday * DAY_MS;
}

/** `t` (milliseconds, bigint SQL) in 10 Crockford base32 characters, as ids begin (core's ids.ts encodeTime), inline. */
function base32Time(t: string): string {
  const digits: string[] = [];
  for (let shift = 45; shift >= 0; shift -= 5) digits.push(`substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((${t} >> ${shift}) & 31)::int + 1, 1)`);
  return digits.join(' || ');
}

/** 16 characters unique per `n` (upper-case hex: valid base32 digits). */
function uniquePart(n: string): string {
  return `upper(lpad(to_hex(${n}), 16, '0'))`;
}

/** Every body is this long (ASCII JSON). */
export const BODY_BYTES = 1024;

const HEADERS = JSON.stringify({
  'content-type': 'application/json',
  'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  'stripe-signature': 't=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
});

/**
 * One statement: the events k in [$5, $6] of one account that fall in [$7, $8) (a leaf's
 * period), with their deliveries and attempts. Parameters:
 * $1 account id, $2 retention class, $3 window start ms, $4 ms between two events,
 * $5..$6 k range, $7..$8 period, $9 g offset (ids and hashes), $10 endpoint ids,
 * $11 endpoint bounds, $12 first destinations, $13 second destinations (null: none),
 * $14 index (1-based) of the endpoint with no retrying event, $15 types, $16 type bounds,
 * $17 the fill's now (ms), $18 event count of the account.
 */
const FILL_STATEMENT = `
  with k as (
    select k, $9::bigint + k as g, ($3::bigint + floor(k * $4::float8))::bigint as t
    from generate_series($5::bigint, $6::bigint) as k
    where k >= 0 and k < $18::bigint
  ),
  src as materialized (
    select g, t, ep, ty,
           case when u < ${FAILED} then 'failed' when u < ${RETRYING} and ep <> $14::int then 'retrying' else 'delivered' end as status,
           'evt_' || ${base32Time('t')} || ${uniquePart('g')} as id
    from (
      select g, t,
             width_bucket(((hashint8extended(g, 1) % 10000 + 10000) % 10000)::int, $11::int[]) + 1 as ep,
             width_bucket(((hashint8extended(g, 2) % 10000 + 10000) % 10000)::int, $16::int[]) + 1 as ty,
             ((hashint8extended(g, 3) % 10000 + 10000) % 10000)::int as u
      from k where t >= $7::bigint and t < $8::bigint
    ) r
  ),
  deliveries as (
    select s.*, d.slot, d.destination_id, case when d.slot = 1 then s.status else 'delivered' end as delivery_status
    from src s
    cross join lateral (values (1, ($12::text[])[s.ep]), (2, ($13::text[])[s.ep])) as d(slot, destination_id)
    where d.destination_id is not null
  ),
  events as (
    insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at, delivery_count, retention_class)
    select id, $1, ($10::text[])[ep], ($15::text[])[ty], 'POST', '/webhooks', '', '${HEADERS}'::jsonb,
           convert_to(prefix || substr(repeat(md5(g::text), 32), 1, ${BODY_BYTES} - 4 - octet_length(prefix)) || '"}}}', 'UTF8'),
           'application/json', ${BODY_BYTES}, timestamptz 'epoch' + t * interval '1 millisecond', 1 + (($13::text[])[ep] is not null)::int, $2::smallint
    from (
      -- offset 0: the prefix is worked out once per row, not once per use
      select *, '{"id":"' || id || '","type":"' || ($15::text[])[ty] || '","created":' || (t / 1000) ||
                ',"data":{"object":{"customer":"cus_' || lpad((g % 50000)::text, 6, '0') || '","email":"user' || (g % 100) ||
                '@example.com","amount":' || (g % 100000) || ',"currency":"usd","padding":"' as prefix
      from src offset 0
    ) p
    returning 1
  ),
  delivery_rows as (
    insert into delivery (event_id, destination_id, account_id, endpoint_id, status, attempt_count, auto_attempts, next_attempt_at, next_trigger, retention_class)
    select id, destination_id, $1, ($10::text[])[ep], delivery_status, n, n,
           case when delivery_status = 'retrying' then timestamptz 'epoch' + ($17::bigint + ${12 * HOUR_MS} + (g % ${HOUR_MS})) * interval '1 millisecond' end,
           'auto', $2::smallint
    from (select *, case delivery_status when 'failed' then 7 when 'retrying' then 3 else 1 end as n from deliveries) d
    returning 1
  ),
  attempt_rows as (
    insert into attempt (id, event_id, destination_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error, retention_class)
    select 'att_' || ${base32Time('at')} || ${uniquePart('g * 32 + slot * 8 + n')}, id, destination_id, $1, n, 'auto',
           timestamptz 'epoch' + at * interval '1 millisecond', 40 + (g % 300),
           case when ok then 200 when n % 3 = 0 then null else 503 end,
           case when ok then '{"received":true}' when n % 3 = 0 then null else 'Service Unavailable' end,
           case when not ok and n % 3 = 0 then 'timeout' end,
           $2::smallint
    from (
      select d.*, a.n, d.t + 50 + ((1::bigint << (a.n - 1)) - 1) * 60000 as at,
             d.delivery_status = 'delivered' and a.n = d.total as ok
      from (select *, case delivery_status when 'failed' then 7 when 'retrying' then 3 else 1 end as total from deliveries) d
      cross join lateral generate_series(1, d.total) as a(n)
    ) a
    returning 1
  )
  select (select count(*) from events)::int as events, (select count(*) from delivery_rows)::int as deliveries, (select count(*) from attempt_rows)::int as attempts`;

/** Cumulative upper bounds of `shares` (per ten thousand) but the last, for width_bucket. */
function bounds(shares: readonly number[]): number[] {
  const out: number[] = [];
  let sum = 0;
  for (const share of shares.slice(0, -1)) out.push((sum += share));
  return out;
}

interface Chunk {
  account: FilledAccount;
  accountIndex: number;
  periodStartMs: number;
  periodEndMs: number;
  kFrom: number;
  kTo: number;
}

/** Days one leaf of a class spans (hook_history_period_days). */
export function periodDays(retentionClass: number): number {
  return Math.max(1, Math.floor(retentionClass / 30));
}

/**
 * The statements to run: one per account and day (a day always lies in one leaf: periods
 * are whole days aligned alike), split in chunks, in day order across all accounts, so
 * rows land on disk in about the order ingest would have written them (the order of a
 * table that is not partitioned, such as \`delivery\`, is what its plans are costed on).
 */
function chunksOf(accounts: readonly FilledAccount[]): Chunk[] {
  const chunks: Chunk[] = [];
  accounts.forEach((account, accountIndex) => {
    if (account.events === 0) return;
    const step = (account.endMs - account.startMs) / account.events;
    for (let start = Math.floor(account.startMs / DAY_MS) * DAY_MS; start < account.endMs; start += DAY_MS) {
      const end = start + DAY_MS;
      const kFrom = Math.max(0, Math.floor((start - account.startMs) / step) - 2);
      const kTo = Math.min(account.events - 1, Math.ceil((end - account.startMs) / step) + 2);
      for (let from = kFrom; from <= kTo; from += CHUNK_EVENTS) {
        chunks.push({ account, accountIndex, periodStartMs: start, periodEndMs: end, kFrom: from, kTo: Math.min(kTo, from + CHUNK_EVENTS - 1) });
      }
    }
  });
  return chunks.sort((a, b) => a.periodStartMs - b.periodStartMs || a.accountIndex - b.accountIndex || a.kFrom - b.kFrom);
}

interface ChunkRange {
  kFrom: number;
  kTo: number;
  periodStartMs: number;
  periodEndMs: number;
}

/** Runs FILL_STATEMENT for events k in [kFrom, kTo] of `account` received in the period, stored in `retentionClass`. */
async function writeChunk(client: pg.Client, account: FilledAccount, retentionClass: number, range: ChunkRange, gOffset: number, nowMs: number): Promise<{ events: number; deliveries: number; attempts: number }> {
  const endpoints = account.shape.endpoints;
  const step = (account.endMs - account.startMs) / account.events;
  const result = await client.query<{ events: number; deliveries: number; attempts: number }>(FILL_STATEMENT, [
    account.accountId, retentionClass, account.startMs, step,
    range.kFrom, range.kTo, range.periodStartMs, Math.min(range.periodEndMs, account.endMs),
    gOffset,
    account.endpointIds, bounds(endpoints.map((e) => e.share)), account.firstDestinations, account.secondDestinations,
    endpoints.length === ENDPOINTS_BIG.length ? endpoints.length : 0,
    EVENT_TYPES, TYPE_BOUNDS, nowMs, account.events,
  ]);
  return result.rows[0]!;
}

/**
 * History from before migration 019 (class 0: the legacy leaf, pruned row by row): `events`
 * events of `account` received uniformly in [startMs, endMs), with deliveries and attempts.
 */
export async function writeLegacyHistory(databaseUrl: string, account: FilledAccount, accountIndex: number, events: number, startMs: number, endMs: number): Promise<FillResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`set work_mem = '256MB'`);
    const legacy: FilledAccount = { ...account, events, startMs, endMs };
    const row = await writeChunk(client, legacy, 0, { kFrom: 0, kTo: events - 1, periodStartMs: startMs, periodEndMs: endMs }, (20 + accountIndex) * 1_000_000_000, Date.now());
    return { ...row, statements: 1 };
  } finally {
    await client.end();
  }
}

export interface FillResult {
  events: number;
  deliveries: number;
  attempts: number;
  statements: number;
}

/**
 * Makes the leaves every account needs (hook_ensure_history_partitions, for its window up
 * to 3 days ahead, as the relay does) and writes the history on `connections` connections.
 */
export async function fillHistory(databaseUrl: string, accounts: readonly FilledAccount[], nowMs: number, connections: number, log: (line: string) => void): Promise<FillResult> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    const classes = new Map<number, number>();
    for (const account of accounts) {
      const c = account.shape.retentionClass;
      classes.set(c, Math.min(classes.get(c) ?? Number.POSITIVE_INFINITY, account.startMs));
    }
    for (const [retentionClass, fromMs] of classes) {
      const made = await admin.query<{ made: number }>('select hook_ensure_history_partitions($1::int, $2::timestamptz, $3::timestamptz) as made',
        [retentionClass, new Date(fromMs), new Date(nowMs + 3 * DAY_MS)]);
      log(`class ${retentionClass}: ${made.rows[0]!.made} leaves made (periods of ${periodDays(retentionClass)} day(s))`);
    }
  } finally {
    await admin.end();
  }

  const chunks = chunksOf(accounts);
  const total: FillResult = { events: 0, deliveries: 0, attempts: 0, statements: 0 };
  const wanted = accounts.reduce((sum, account) => sum + account.events, 0);
  const started = performance.now();
  let lastLog = started;
  let next = 0;
  const worker = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(`set synchronous_commit = off; set work_mem = '256MB'; set jit = off`);
      for (let i = next++; i < chunks.length; i = next++) {
        const chunk = chunks[i]!;
        const row = await writeChunk(client, chunk.account, chunk.account.shape.retentionClass, chunk, (chunk.accountIndex + 1) * 1_000_000_000, nowMs);
        total.events += row.events;
        total.deliveries += row.deliveries;
        total.attempts += row.attempts;
        total.statements++;
        if (performance.now() - lastLog > 15_000) {
          lastLog = performance.now();
          const s = (lastLog - started) / 1000;
          log(`fill: ${total.events.toLocaleString('en')} of ${wanted.toLocaleString('en')} events in ${s.toFixed(0)} s (${Math.round(total.events / s).toLocaleString('en')}/s)`);
        }
      }
    } finally {
      await client.end();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return total;
}

/**
 * FROM items listing every table holding history rows as \`t(relid)\` beside its history
 * table \`p(name)\`: the leaves of \`event\`, \`delivery\` and \`attempt\`, or the table itself
 * where one is not partitioned (pg_partition_tree lists nothing for a plain table).
 */
export const HISTORY_LEAVES = `unnest(array['event', 'delivery', 'attempt']) as p(name)
  cross join lateral (
    select relid from pg_partition_tree(p.name::regclass) where isleaf
    union all select p.name::regclass where (select relkind from pg_class where oid = p.name::regclass) = 'r'
  ) t`;

/** VACUUM (ANALYZE) of every leaf of the three history trees, on `connections` connections (the parents are left as autovacuum leaves them: never analysed). */
export async function vacuumLeaves(databaseUrl: string, connections: number): Promise<number> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  let leaves: string[];
  try {
    const rows = await admin.query<{ relid: string }>(`select t.relid::text from ${HISTORY_LEAVES} order by pg_relation_size(t.relid) desc`);
    leaves = rows.rows.map((row) => row.relid);
  } finally {
    await admin.end();
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(`set maintenance_work_mem = '1GB'`);
      for (let i = next++; i < leaves.length; i = next++) await client.query(`vacuum (analyze) ${leaves[i]}`);
    } finally {
      await client.end();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return leaves.length;
}
