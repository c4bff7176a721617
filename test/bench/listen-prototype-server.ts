/**
 * bench:listen-prototype's server: a lean stand-in for the relay's ingest and listen
 * stream, to measure the best alternative listen design (issue 30). Not product code.
 *
 * - Ingest (node:http, `POST /listen` and `POST /store`): bodies are group-committed, one
 *   statement a batch (one in flight; what arrives meanwhile is the next batch), storing
 *   the events, metering them on account_usage, and for `/listen` their delivery rows
 *   ALREADY LEASED to the connected session (the "shortcut": no claim). Only after the
 *   commit are the senders answered 202 `{"id": …}`, so nothing acknowledged is lost on a
 *   crash (the event and its delivery are durable; a lease that runs out makes it due).
 * - Stream (ws, `/session`): after the commit the leased events go to the client in
 *   BINARY frames, one frame per event-loop turn, each event as
 *   [u8 id length][id][u32 webhook-timestamp][u8 signature length][signature][u32 body length][body]
 *   (signed here, Standard Webhooks: HMAC-SHA256 of `id.timestamp.body`), no JSON or base64.
 * - Results: the client acks a turn's results in one binary frame
 *   ([u8 id length][id][u16 status, 0: no answer][f64 started, epoch ms][f32 duration ms]);
 *   they are group-committed, one statement a batch with its parameters as ONE JSON
 *   document (jsonb_to_recordset): each delivery moves out of the queue (delivered, or
 *   failed) and each attempt gets its row.
 * - Flow control: at most PROTO_WINDOW events pushed and not yet acked. Past that, and
 *   while any event waits unleased, events are stored due (unleased), in order, and
 *   claimed (FOR UPDATE SKIP LOCKED, with a cursor, oldest first) when the window frees:
 *   the queue path is only taken when the client falls behind. `GET /stats` says how many
 *   went each way.
 *
 * Left out (see the report): reconnects (one session, no resume), crash recovery (no
 * lease expiry sweep or poll: a lease that runs out is never re-claimed here), retries,
 * filters, transformations, several destinations per endpoint, dedupe keys, quota checks
 * (the usage row is counted, not checked), API keys and auth, event headers beyond
 * content-type. Events, deliveries and attempts go to the account's retention class's
 * partitions, as the relay stores them (the orchestrator makes today's).
 *
 * Environment: PROTO_DATABASE_URL, PROTO_ACCOUNT, PROTO_LISTEN_ENDPOINT, PROTO_STORE_ENDPOINT,
 * PROTO_DESTINATION, PROTO_SECRET, PROTO_RETENTION_CLASS, PROTO_WINDOW (default 1024), PROTO_MAX_BATCH (default 200).
 * First stdout line: "prototype listening on http://127.0.0.1:<port>".
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { newId } from '@hook/core';
import { WebSocketServer, type WebSocket } from 'ws';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const DATABASE_URL = env('PROTO_DATABASE_URL');
const ACCOUNT = env('PROTO_ACCOUNT');
const LISTEN_ENDPOINT = env('PROTO_LISTEN_ENDPOINT');
const STORE_ENDPOINT = env('PROTO_STORE_ENDPOINT');
const DESTINATION = env('PROTO_DESTINATION');
const SECRET = Buffer.from(env('PROTO_SECRET'));
const RETENTION_CLASS = Number(env('PROTO_RETENTION_CLASS'));
let WINDOW = Number(process.env.PROTO_WINDOW ?? 1024);
const MAX_BATCH = Number(process.env.PROTO_MAX_BATCH ?? 200);
const LEASE_S = 60;
const MAX_BODY_BYTES = 1024 * 1024;

// The queue's partition alone, as the engine writes it (claimed-columns.ts, DELIVERY_OPEN).
const DELIVERY_OPEN = `l.layout = 1 and (l.status in ('pending', 'retrying') or l.next_trigger = 'replay') is true`;

const STORE = {
  name: 'proto_store',
  text: `
    with b as (
      select t.id, t.endpoint_id, t.destination_id, t.lease, t.ms, t.len, t.ord, substring($2::bytea from t.off + 1 for t.len) as body
      from unnest($1::text[], $3::text[], $4::text[], $5::bool[], $6::float8[], $7::int[], $8::int[]) with ordinality
        as t(id, endpoint_id, destination_id, lease, ms, off, len, ord)
    ),
    h as (select $9::jsonb as headers),
    counted as (
      update account_usage u set events_accepted = u.events_accepted + (select count(*) from b)
      where u.account_id = $10 and u.month = $11::date
      returning 1
    ),
    inserted as (
      insert into event (id, account_id, endpoint_id, method, path, query, headers, body, content_type, size, received_at, delivery_count, retention_class)
      select b.id, $10, b.endpoint_id, 'POST', '', '', h.headers -> (b.ord - 1)::int, b.body, h.headers -> (b.ord - 1)::int ->> 'content-type', b.len,
             to_timestamp(b.ms / 1000), (b.destination_id is not null)::int, $13
      from b cross join h
      returning id
    )
    insert into delivery (event_id, destination_id, account_id, endpoint_id, status, next_attempt_at, lease_id, locked_until, retention_class)
    select b.id, b.destination_id, $10, b.endpoint_id, 'pending', to_timestamp(b.ms / 1000),
           case when b.lease then $12 || '.' || b.id end, case when b.lease then now() + make_interval(secs => ${LEASE_S}) end, $13
    from b where b.destination_id is not null`,
};

const RECORD = {
  name: 'proto_record',
  text: `
    with r as (select * from jsonb_to_recordset($1::jsonb) as r(e text, s int, t float8, d float8)),
    moved as (
      update delivery l
      set status = case when r.s between 200 and 299 then 'delivered' else 'failed' end, attempt_count = l.attempt_count + 1,
          next_attempt_at = null, lease_id = null, locked_until = null
      from r
      where l.event_id = r.e and l.destination_id = $2 and l.lease_id = $3 || '.' || r.e and ${DELIVERY_OPEN}
      returning l.event_id, l.attempt_count, l.retention_class
    )
    insert into attempt (id, event_id, destination_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error, retention_class)
    select 'att_' || substr(m.event_id, 5), m.event_id, $2, $4, m.attempt_count, 'listen', to_timestamp(r.t / 1000),
           round(r.d)::int, nullif(r.s, 0), '', case when r.s = 0 then 'no answer from the local server' end, m.retention_class
    from moved m join r on r.e = m.event_id`,
};

const CLAIM = {
  name: 'proto_claim',
  text: `
    with due as materialized (
      select l.event_id from delivery l
      where l.destination_id = $1 and l.next_attempt_at <= now() and (l.next_attempt_at, l.event_id) > ($4::timestamptz, $5::text)
        and ${DELIVERY_OPEN} and l.lease_id is null
      order by l.destination_id, l.next_attempt_at, l.event_id
      limit $2
      for update of l skip locked
    )
    update delivery l set lease_id = $3 || '.' || l.event_id, locked_until = now() + make_interval(secs => ${LEASE_S})
    from due, event e
    where l.event_id = due.event_id and l.destination_id = $1 and ${DELIVERY_OPEN} and e.id = l.event_id
    returning l.event_id, e.body, e.content_type, (extract(epoch from e.received_at) * 1000)::float8 as ms, l.next_attempt_at::text as due`,
};

interface Received {
  id: string;
  listened: boolean;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
  res: ServerResponse;
}

interface Outgoing {
  id: string;
  body: Buffer;
  ms: number;
}

const stats = { stored: 0, storeStatements: 0, shortcut: 0, unleased: 0, claims: 0, claimed: 0, recorded: 0, recordStatements: 0, acked: 0, failedBatches: 0 };

const connect = async (): Promise<pg.Client> => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  return client;
};
const storeDb = await connect();
const recordDb = await connect();
const claimDb = await connect();
const month = new Date().toISOString().slice(0, 7) + '-01';

// ---------------------------------------------------------------------------------
// Ingest with group commit

let receiving: Received[] = [];
let storing = false;
let storeScheduled = false;

function ingest(req: IncomingMessage, res: ServerResponse, listened: boolean): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return void res.writeHead(413).end();
    const { host: _host, connection: _connection, 'content-length': _length, ...headers } = req.headers;
    receiving.push({
      id: newId('event'),
      listened,
      body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
      headers,
      ms: Date.now(),
      res,
    });
    if (!storing && !storeScheduled) {
      storeScheduled = true;
      setImmediate(store);
    }
  });
}

/** Backlog: events stored unleased (due) and not claimed yet; while there is one, new events are stored unleased too (order). */
let backlog = 0;
let inFlight = 0;

async function store(): Promise<void> {
  storeScheduled = false;
  if (storing || receiving.length === 0) return;
  storing = true;
  const batch = receiving.length <= MAX_BATCH ? receiving : receiving.slice(0, MAX_BATCH);
  receiving = batch === receiving ? [] : receiving.slice(MAX_BATCH);
  // Which listened events are leased to the session: in order, while the window has room and nothing waits unleased.
  let leasing = session !== null && backlog === 0 && !claiming;
  let leased = 0;
  let unleased = 0;
  const lease = batch.map((event) => {
    if (!event.listened) return false;
    if (leasing && inFlight + leased < WINDOW) {
      leased++;
      return true;
    }
    leasing = false;
    unleased++;
    return false;
  });
  const offsets: number[] = [];
  const lengths: number[] = [];
  let offset = 0;
  for (const event of batch) {
    offsets.push(offset);
    lengths.push(event.body.length);
    offset += event.body.length;
  }
  const token = session?.token ?? '';
  try {
    await storeDb.query({
      ...STORE,
      values: [
        batch.map((e) => e.id), Buffer.concat(batch.map((e) => e.body), offset),
        batch.map((e) => (e.listened ? LISTEN_ENDPOINT : STORE_ENDPOINT)), batch.map((e) => (e.listened ? DESTINATION : null)),
        lease, batch.map((e) => e.ms), offsets, lengths, JSON.stringify(batch.map((e) => e.headers)), ACCOUNT, month, token, RETENTION_CLASS,
      ],
    });
    stats.stored += batch.length;
    stats.storeStatements++;
    for (const event of batch) {
      const answer = `{"id":"${event.id}"}`;
      event.res.writeHead(202, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer);
    }
    stats.shortcut += leased;
    stats.unleased += unleased;
    backlog += unleased;
    if (leased > 0 && session && session.token === token) {
      inFlight += leased;
      batch.forEach((event, i) => {
        if (lease[i]) push({ id: event.id, body: event.body, ms: event.ms });
      });
    }
  } catch (error) {
    stats.failedBatches++;
    process.stderr.write(`store failed: ${(error as Error).message}\n`);
    for (const event of batch) event.res.writeHead(503, { 'content-length': '0' }).end();
  }
  storing = false;
  if (receiving.length > 0) void store();
  maybeClaim();
}

// ---------------------------------------------------------------------------------
// The session: binary frames out, acks in

interface Session {
  socket: WebSocket;
  token: string;
}

let session: Session | null = null;
let outgoing: Outgoing[] = [];
let pushScheduled = false;

function push(event: Outgoing): void {
  outgoing.push(event);
  if (!pushScheduled) {
    pushScheduled = true;
    setImmediate(flushPush);
  }
}

function flushPush(): void {
  pushScheduled = false;
  const events = outgoing;
  outgoing = [];
  if (!session || events.length === 0) return;
  const signatures = events.map((event) => {
    const timestamp = Math.floor(event.ms / 1000);
    const signature = createHmac('sha256', SECRET).update(`${event.id}.${timestamp}.`).update(event.body).digest('base64');
    return { timestamp, signature };
  });
  let size = 0;
  for (let i = 0; i < events.length; i++) size += 1 + events[i]!.id.length + 4 + 1 + signatures[i]!.signature.length + 4 + events[i]!.body.length;
  const frame = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < events.length; i++) {
    const { id, body } = events[i]!;
    const { timestamp, signature } = signatures[i]!;
    frame[at++] = id.length;
    at += frame.write(id, at, 'latin1');
    at = frame.writeUInt32BE(timestamp, at);
    frame[at++] = signature.length;
    at += frame.write(signature, at, 'latin1');
    at = frame.writeUInt32BE(body.length, at);
    at += body.copy(frame, at);
  }
  session.socket.send(frame, { binary: true });
}

interface Result { e: string; s: number; t: number; d: number }
let results: Result[] = [];
let recording = false;

function onAcks(frame: Buffer): void {
  let at = 0;
  let n = 0;
  while (at < frame.length) {
    const idLength = frame[at++]!;
    const e = frame.toString('latin1', at, at + idLength);
    at += idLength;
    const s = frame.readUInt16BE(at);
    const t = frame.readDoubleBE(at + 2);
    const d = frame.readFloatBE(at + 10);
    at += 14;
    results.push({ e, s, t, d: Math.round(d * 100) / 100 });
    n++;
  }
  stats.acked += n;
  inFlight -= n;
  if (!recording) void record();
  maybeClaim();
}

async function record(): Promise<void> {
  if (recording || results.length === 0) return;
  recording = true;
  const batch = results;
  results = [];
  try {
    await recordDb.query({ ...RECORD, values: [JSON.stringify(batch), DESTINATION, session?.token ?? '', ACCOUNT] });
    stats.recorded += batch.length;
    stats.recordStatements++;
  } catch (error) {
    stats.failedBatches++;
    process.stderr.write(`record failed: ${(error as Error).message}\n`);
  }
  recording = false;
  if (results.length > 0) void record();
}

// ---------------------------------------------------------------------------------
// The queue path, only when the client fell behind

let claiming = false;
let cursor = { due: '-infinity', id: '' };

function maybeClaim(): void {
  if (claiming || backlog === 0 || !session) return;
  const room = WINDOW - inFlight;
  // wait for a quarter of the window (or the whole backlog) to be free: fewer, larger claims
  if (room < Math.min(backlog, WINDOW / 4)) return;
  void claim(Math.min(room, backlog, 500));
}

async function claim(limit: number): Promise<void> {
  claiming = true;
  const current = session!;
  try {
    const { rows } = await claimDb.query<{ event_id: string; body: Buffer; content_type: string | null; ms: number; due: string }>({
      ...CLAIM, values: [DESTINATION, limit, current.token, cursor.due, cursor.id],
    });
    rows.sort((a, b) => (a.due < b.due ? -1 : a.due > b.due ? 1 : a.event_id < b.event_id ? -1 : 1));
    stats.claims++;
    stats.claimed += rows.length;
    backlog = rows.length < limit ? 0 : backlog - rows.length;
    const last = rows.at(-1);
    if (last) cursor = { due: last.due, id: last.event_id };
    if (session === current) {
      inFlight += rows.length;
      for (const row of rows) push({ id: row.event_id, body: row.body, ms: row.ms });
    }
  } catch (error) {
    process.stderr.write(`claim failed: ${(error as Error).message}\n`);
  }
  claiming = false;
  maybeClaim();
}

// ---------------------------------------------------------------------------------

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/listen') return ingest(req, res, true);
  if (req.method === 'POST' && req.url === '/store') return ingest(req, res, false);
  if (req.method === 'POST' && req.url?.startsWith('/window?size=')) {
    // the bench sets a small window to measure the queue path (claims) with the same processes
    WINDOW = Number(req.url.slice('/window?size='.length));
    return void res.writeHead(204).end();
  }
  if (req.method === 'GET' && req.url === '/stats') {
    const body = JSON.stringify({ ...stats, backlog, inFlight });
    return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
  }
  res.writeHead(404, { 'content-length': '0' }).end();
});
server.keepAliveTimeout = 65_000;
const sockets = new WebSocketServer({ server, path: '/session', perMessageDeflate: false });
sockets.on('connection', (socket) => {
  // One session (a new one replaces the old; what the old held is not given back: no recovery here).
  session?.socket.terminate();
  const current: Session = { socket, token: `ls_${randomBytes(9).toString('base64url')}` };
  session = current;
  inFlight = 0;
  socket.on('message', (data, isBinary) => {
    if (isBinary) onAcks(data as Buffer);
  });
  socket.on('close', () => {
    if (session === current) session = null;
  });
  maybeClaim();
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`prototype listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  for (const client of sockets.clients) client.terminate();
  server.closeAllConnections();
  server.close();
  void Promise.all([storeDb.end(), recordDb.end(), claimDb.end()]).finally(() => process.exit(0));
});
