/**
 * A real HTTP receiver that records each exchange from the moment its request arrives
 * until its answer went out (or its connection closed), on one tick counter: so a test
 * can tell in what order deliveries came and which of them were in flight together
 * (ordered delivery: test/e2e/ordered-delivery-processes.test.ts and
 * apps/relay/test/ordered-delivery.test.ts). Ticks, not clock readings: two exchanges
 * within one millisecond still have an order.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';

/** One request and what became of it. */
export interface Exchange {
  /** The delivery's `webhook-id`: the event id. */
  eventId: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** What the receiver answered (or was about to, when the connection closed first). */
  status: number;
  /** Tick at which its request arrived. */
  startTick: number;
  /** Tick at which its answer went out or its connection closed; null while in flight. */
  endTick: number | null;
  /** When its request arrived and when it ended (Date.now()), for messages and reports. */
  startedAtMs: number;
  endedAtMs: number | null;
  /** Whether the answer was written before the connection closed (a relay killed mid-request never read it). */
  answered: boolean;
}

/** How the receiver answers an exchange; it may look at every exchange before it. */
export type ExchangeResponder = (exchange: Exchange, earlier: readonly Exchange[]) => { status: number; delayMs?: number; headers?: Record<string, string> };

export interface TimedReceiver {
  url: string;
  /** Every exchange, in arrival order. */
  exchanges: Exchange[];
  /** How the receiver answers; change it any time. Default 200 at once. */
  respond: ExchangeResponder;
  /** Most exchanges in flight at once so far. */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

export async function startTimedReceiver(respond: ExchangeResponder = () => ({ status: 200 })): Promise<TimedReceiver> {
  let tick = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const exchanges: Exchange[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const exchange: Exchange = { eventId: String(request.headers['webhook-id']), headers: request.headers, body: Buffer.alloc(0), status: 0, startTick: ++tick, endTick: null, startedAtMs: Date.now(), endedAtMs: null, answered: false };
    exchanges.push(exchange);
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    open.add(response);
    response.once('close', () => {
      exchange.endTick = ++tick;
      exchange.endedAtMs = Date.now();
      inFlight--;
      open.delete(response);
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exchange.body = Buffer.concat(chunks);
      const answer = receiver.respond(exchange, exchanges);
      exchange.status = answer.status;
      setTimeout(() => {
        if (response.destroyed) return;
        exchange.answered = true;
        response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        response.end(`answer ${answer.status}`);
      }, answer.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 60_000;
  const receiver: TimedReceiver = {
    url: '',
    exchanges,
    respond,
    get maxInFlight() {
      return maxInFlight;
    },
    async close() {
      for (const response of open) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  receiver.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`;
  return receiver;
}

/** Whether an exchange was answered 2xx (or about to be). */
export function succeeded(exchange: Exchange): boolean {
  return exchange.status >= 200 && exchange.status < 300;
}

/** Event ids in the order of their first 2xx exchange, per group (`groupOf` an exchange's group, e.g. its ordering key). */
export function firstSuccessOrder(exchanges: readonly Exchange[], groupOf: (exchange: Exchange) => string): Map<string, string[]> {
  const seen = new Set<string>();
  const orders = new Map<string, string[]>();
  for (const exchange of [...exchanges].sort((a, b) => a.startTick - b.startTick)) {
    if (!succeeded(exchange) || seen.has(exchange.eventId)) continue;
    seen.add(exchange.eventId);
    const group = groupOf(exchange);
    orders.set(group, [...(orders.get(group) ?? []), exchange.eventId]);
  }
  return orders;
}

/**
 * Pairs of exchanges of one group that were in flight at the same time (the later one
 * arrived before the earlier one ended), per group; an exchange still in flight overlaps
 * everything after it.
 */
export function overlappingExchanges(exchanges: readonly Exchange[], groupOf: (exchange: Exchange) => string): [Exchange, Exchange][] {
  const byGroup = new Map<string, Exchange[]>();
  for (const exchange of exchanges) byGroup.set(groupOf(exchange), [...(byGroup.get(groupOf(exchange)) ?? []), exchange]);
  const pairs: [Exchange, Exchange][] = [];
  for (const group of byGroup.values()) {
    group.sort((a, b) => a.startTick - b.startTick);
    let latest: Exchange | undefined; // of those started so far, the one that ends last
    for (const exchange of group) {
      if (latest && (latest.endTick === null || exchange.startTick < latest.endTick)) pairs.push([latest, exchange]);
      if (!latest || (latest.endTick !== null && (exchange.endTick === null || exchange.endTick > latest.endTick))) latest = exchange;
    }
  }
  return pairs;
}
