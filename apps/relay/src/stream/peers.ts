import { channel } from 'node:diagnostics_channel';
import { newUlid } from '@hook/core';
import { openStreamChannel, readStreamEvents, STREAM_PAYLOAD_MAX_BYTES, type Orm, type StreamChannel } from '@hook/db';
import type { CopyFact, StreamFact, StreamHub, StreamPeers } from './hub.ts';

/** How long facts wait to travel together: the added tail latency for another process's events and attempts. */
export const STREAM_FLUSH_INTERVAL_MS = 50;
/** Facts waiting to be sent at the most (about 3 MB); more are dropped while the database does not take them. */
const MAX_PENDING_FACTS = 10_000;
/** How often a process repeats which accounts it watches (a process that joins, or missed a message, learns within this). */
const WATCH_ANNOUNCE_INTERVAL_MS = 10_000;
/** How long an account counts as watched elsewhere after the last announcement naming it (a process that died stops counting after this). */
const WATCH_EXPIRY_MS = 3 * WATCH_ANNOUNCE_INTERVAL_MS;

/**
 * Each `watch` announcement a process takes in from another, published on a
 * `node:diagnostics_channel` as { processId, from, accountIds } (read only, free when
 * nobody subscribes; tests wait on it to know a peer has learned of a watch).
 */
export const STREAM_PEERS_WATCH_CHANNEL = 'hook:stream-peers:watch';
const watchSignals = channel(STREAM_PEERS_WATCH_CHANNEL);

/**
 * What travels on the channel. `p` is the sending process, so each one drops its own
 * messages (it told its own sessions directly).
 * - `hello`: a process (re)connected; everyone announces what they watch.
 * - `watch`: the accounts the sender watches now (split over several messages when long).
 * - `facts`: events stored, attempts recorded and deliveries sent (`copy`, with what was
 *   sent) in the sender, in order. `ref` stands for an event whose summary is too large for
 *   a payload: receivers read it from the database. A copy too large for one is sent as
 *   `part`s (its JSON in base64, cut in order), which follow each other in the sender's
 *   order and are joined again.
 */
type PeerMessage =
  | { v: 1; p: string; k: 'hello' }
  | { v: 1; p: string; k: 'watch'; a: string[] }
  | { v: 1; p: string; k: 'facts'; f: WireFact[] };
type WireFact = StreamFact | { kind: 'ref'; accountId: string; id: string } | CopyPart;
/** Part `i` of `n` of a copy too large for one payload. */
interface CopyPart { kind: 'part'; accountId: string; id: string; i: number; n: number; data: string }

export interface StreamPeerOptions {
  hub: StreamHub;
  orm: Orm;
  databaseUrl: string;
  onError?: (error: Error) => void;
}

/**
 * The live stream across relay processes on one database. Each process collects the facts
 * (events stored, attempts recorded) for accounts that another process watches, and every
 * STREAM_FLUSH_INTERVAL_MS sends them as one NOTIFY on `hook_stream` (split under
 * PostgreSQL's 8000-byte payload limit); every process LISTENs and hands the others' facts
 * to its hub. Nothing is sent for accounts nobody watches elsewhere, so ingest with no
 * tail open costs one map lookup; the ingest statement itself never NOTIFYs per event.
 *
 * Best effort, like the stream itself: facts sent while a connection is re-established
 * are lost to tails (the events and attempts are in the database).
 */
export class StreamPeerLink implements StreamPeers {
  readonly processId = `proc_${newUlid()}`;
  readonly #options: StreamPeerOptions;
  /** Accounts watched by other processes → when that stops counting (ms since epoch). */
  readonly #watchedElsewhere = new Map<string, number>();
  #pending: StreamFact[] = [];
  /** hello messages waiting for the next flush. */
  #extraMessages: PeerMessage[] = [];
  #announceWatches = false;
  #flushTimer: NodeJS.Timeout | undefined;
  #announceTimer: NodeJS.Timeout | undefined;
  /** The send in progress: one at a time, so payloads leave in the order the facts happened. */
  #sending: Promise<void> | undefined;
  /** Received facts are handed over one message at a time, in order (a `ref` waits for its read). */
  #receiving: Promise<void> = Promise.resolve();
  #channel: StreamChannel | undefined;
  #closed = false;
  /** Per sending process, the copy whose parts are arriving. */
  readonly #partsFrom = new Map<string, { id: string; parts: string[] }>();

  constructor(options: StreamPeerOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#channel = await openStreamChannel({
      databaseUrl: this.#options.databaseUrl,
      onMessage: (payload) => this.#onMessage(payload),
      onConnected: () => {
        this.#queueMessage({ v: 1, p: this.processId, k: 'hello' });
        this.localWatchesChanged();
      },
      onError: (error) => this.#options.onError?.(error),
    });
    this.#options.hub.connectPeers(this);
    this.#announceTimer = setInterval(() => this.localWatchesChanged(), WATCH_ANNOUNCE_INTERVAL_MS);
    this.#announceTimer.unref();
  }

  /** How many watches other processes announced and this process knows of: accounts, and URL destinations mirrored (read only: /metrics shows it as hook_stream_watches_elsewhere). */
  get watchesElsewhere(): number {
    const now = Date.now();
    let count = 0;
    for (const until of this.#watchedElsewhere.values()) if (until > now) count++;
    return count;
  }

  watch(accountId: string): boolean {
    const until = this.#watchedElsewhere.get(accountId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#watchedElsewhere.delete(accountId);
    return false;
  }

  publish(fact: StreamFact): void {
    // While the database does not take them (a send hangs), facts wait up to a bound, then are dropped: tails are best effort.
    if (this.#pending.length >= MAX_PENDING_FACTS) return;
    this.#pending.push(fact);
    this.#scheduleFlush();
  }

  localWatchesChanged(): void {
    this.#announceWatches = true;
    this.#scheduleFlush();
  }

  /** Sends what is pending, then stops. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#announceTimer) clearInterval(this.#announceTimer);
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    await this.#sending;
    await this.#flush();
    await this.#receiving;
    await this.#channel?.close();
  }

  #queueMessage(message: PeerMessage): void {
    this.#extraMessages.push(message);
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (this.#flushTimer || this.#closed) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      void this.#flush();
    }, STREAM_FLUSH_INTERVAL_MS);
    this.#flushTimer.unref();
  }

  /** Sends what is pending, unless a send is in progress: that one schedules the next flush when it ends. */
  #flush(): Promise<void> {
    if (this.#sending) return this.#sending;
    const payloads = this.#takePayloads();
    if (payloads.length === 0) return Promise.resolve();
    this.#sending = (async () => {
      try {
        await this.#channel?.send(payloads);
      } catch (error) {
        this.#options.onError?.(error as Error);
      } finally {
        this.#sending = undefined;
        if (this.#pending.length > 0 || this.#extraMessages.length > 0 || this.#announceWatches) this.#scheduleFlush();
      }
    })();
    return this.#sending;
  }

  #takePayloads(): string[] {
    const payloads = this.#extraMessages.map((message) => JSON.stringify(message));
    this.#extraMessages = [];
    if (this.#announceWatches) {
      this.#announceWatches = false;
      payloads.push(...pack(this.#options.hub.watchedAccounts(), (a) => ({ v: 1, p: this.processId, k: 'watch', a })));
    }
    const facts = this.#pending.flatMap(fitFact);
    this.#pending = [];
    payloads.push(...pack(facts, (f) => ({ v: 1, p: this.processId, k: 'facts', f })));
    return payloads;
  }

  #onMessage(payload: string): void {
    let message: PeerMessage;
    try {
      message = JSON.parse(payload) as PeerMessage;
    } catch {
      return;
    }
    if (message.v !== 1 || message.p === this.processId) return;
    if (message.k === 'hello') {
      this.localWatchesChanged();
    } else if (message.k === 'watch') {
      const until = Date.now() + WATCH_EXPIRY_MS;
      for (const accountId of message.a) this.#watchedElsewhere.set(accountId, until);
      if (watchSignals.hasSubscribers) watchSignals.publish({ processId: this.processId, from: message.p, accountIds: message.a });
    } else if (message.k === 'facts') {
      const facts = this.#joinParts(message.p, message.f);
      this.#receiving = this.#receiving.then(() => this.#receive(facts)).catch((error: unknown) => this.#options.onError?.(error as Error));
    }
  }

  /** The facts with a copy's parts joined into the copy once its last part came (its parts arrive in order, one copy at a time per sender). */
  #joinParts(sender: string, facts: WireFact[]): Exclude<WireFact, CopyPart>[] {
    const joined: Exclude<WireFact, CopyPart>[] = [];
    for (const fact of facts) {
      if (fact.kind !== 'part') {
        joined.push(fact);
        continue;
      }
      let copy = this.#partsFrom.get(sender);
      if (fact.i === 0 || copy?.id !== fact.id) this.#partsFrom.set(sender, (copy = { id: fact.id, parts: [] }));
      // A part missing (a payload lost while reconnecting): that copy is dropped, like any fact lost then.
      if (copy.parts.length !== fact.i) continue;
      copy.parts.push(fact.data);
      if (copy.parts.length < fact.n) continue;
      this.#partsFrom.delete(sender);
      joined.push(JSON.parse(Buffer.from(copy.parts.join(''), 'base64').toString('utf8')) as CopyFact);
    }
    return joined;
  }

  async #receive(facts: Exclude<WireFact, CopyPart>[]): Promise<void> {
    const { hub, orm } = this.#options;
    const watched = facts.filter((fact) => hub.watchesHere(fact.kind === 'attempt' ? fact.finished.accountId : fact.accountId));
    const refs = watched.flatMap((fact) => (fact.kind === 'ref' ? [fact.id] : []));
    const read = refs.length === 0 ? new Map() : new Map((await readStreamEvents(orm, refs)).map((row) => [row.id, row]));
    for (const fact of watched) {
      if (fact.kind !== 'ref') {
        hub.receive(fact);
        continue;
      }
      const row = read.get(fact.id);
      if (!row) continue; // removed meanwhile
      hub.receive({
        kind: 'event',
        accountId: row.account_id,
        event: {
          id: row.id, endpoint_id: row.endpoint_id, type: row.type, method: row.method, path: row.path, query: row.query,
          content_type: row.content_type, size: row.size, received_at: row.received_at.toISOString(), status: 'pending', verification: row.verification,
        },
      });
    }
  }
}

/** Room in a payload for the envelope around one fact. */
const ENVELOPE_BYTES = 200;
/** Base64 characters of a copy in one part: a part fills a payload with room for its envelope and fields. */
const COPY_PART_CHARS = STREAM_PAYLOAD_MAX_BYTES - 2 * ENVELOPE_BYTES;
/** Characters of an attempt's error a payload carries when the whole would not fit. */
const ATTEMPT_ERROR_MAX_CHARS = 1000;

/**
 * Facts that each fit in a payload: an event too large (a long path or query) travels as
 * a reference, an attempt too large (a long error) with its error cut short, a copy too
 * large (most bodies) in parts.
 */
function fitFact(fact: StreamFact): WireFact[] {
  const json = JSON.stringify(fact);
  if (byteLength(json) <= STREAM_PAYLOAD_MAX_BYTES - ENVELOPE_BYTES) return [fact];
  if (fact.kind === 'event') return [{ kind: 'ref', accountId: fact.accountId, id: fact.event.id }];
  if (fact.kind === 'copy') {
    const data = Buffer.from(json, 'utf8').toString('base64');
    const n = Math.ceil(data.length / COPY_PART_CHARS);
    const id = newUlid();
    return Array.from({ length: n }, (_, i): CopyPart => ({ kind: 'part', accountId: fact.accountId, id, i, n, data: data.slice(i * COPY_PART_CHARS, (i + 1) * COPY_PART_CHARS) }));
  }
  const { attempt } = fact.finished;
  return [{ kind: 'attempt', finished: { ...fact.finished, attempt: { ...attempt, error: attempt.error && `${attempt.error.slice(0, ATTEMPT_ERROR_MAX_CHARS)}…` } } }];
}

/** Messages of `make(items)` under the payload limit, items in order. */
function pack<T>(items: readonly T[], make: (items: T[]) => PeerMessage): string[] {
  const payloads: string[] = [];
  let batch: T[] = [];
  let size = byteLength(JSON.stringify(make([])));
  for (const item of items) {
    const itemSize = byteLength(JSON.stringify(item)) + 1;
    if (batch.length > 0 && size + itemSize > STREAM_PAYLOAD_MAX_BYTES) {
      payloads.push(JSON.stringify(make(batch)));
      batch = [];
      size = byteLength(JSON.stringify(make([])));
    }
    batch.push(item);
    size += itemSize;
  }
  if (batch.length > 0) payloads.push(JSON.stringify(make(batch)));
  return payloads;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
