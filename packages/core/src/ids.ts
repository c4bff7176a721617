import { randomBytes } from 'node:crypto';

/** Prefixes of every resource id, as DESIGN.md §2 names them. */
export const ID_PREFIXES = {
  account: 'acct',
  apiKey: 'key',
  endpoint: 'ep',
  destination: 'dst',
  event: 'evt',
  attempt: 'att',
  planChange: 'plch',
  member: 'mem',
  issue: 'iss',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// Crockford base32: sortable as plain ASCII and free of ambiguous letters.
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10; // 48-bit millisecond timestamp
const RANDOM_CHARS = 16; // 80 random bits
const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

let lastTimeMs = -1;
/** encodeTime(lastTimeMs), kept: every id of a millisecond shares it. */
let lastTimeText = '';
/** The random part of the last id, one base32 digit a byte, and its text but the last digit. */
const lastRandom = new Uint8Array(RANDOM_CHARS);
let lastRandomHead = '';

// Random bytes are drawn in blocks: one crypto call per id was a visible cost at
// thousands of ids a second.
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomPoolOffset = 0;

function encodeTime(timeMs: number): string {
  let out = '';
  let rest = timeMs;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = BASE32[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function freshRandom(): void {
  if (randomPoolOffset + RANDOM_CHARS > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomPoolOffset = 0;
  }
  for (let i = 0; i < RANDOM_CHARS; i++) lastRandom[i] = randomPool[randomPoolOffset + i]! & 31;
  randomPoolOffset += RANDOM_CHARS;
  randomHeadChanged();
}

function randomHeadChanged(): void {
  let head = '';
  for (let i = 0; i < RANDOM_CHARS - 1; i++) head += BASE32[lastRandom[i]!];
  lastRandomHead = head;
}

/** Adds one to the random part so ids made in the same millisecond still sort in creation order. */
function incrementRandom(): void {
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    if (lastRandom[i]! < 31) {
      lastRandom[i]! += 1;
      // only the last digit moved (31 times in 32): the head's text stands
      if (i < RANDOM_CHARS - 1) randomHeadChanged();
      return;
    }
    lastRandom[i] = 0;
  }
  freshRandom(); // 80 bits overflowed within one millisecond: practically unreachable
}

/**
 * A ULID: 26 characters that sort in creation order (monotonic within this process,
 * by time across processes) and carry 80 random bits.
 */
export function newUlid(nowMs: number = Date.now()): string {
  if (nowMs <= lastTimeMs) {
    incrementRandom();
  } else {
    lastTimeMs = nowMs;
    lastTimeText = encodeTime(nowMs);
    freshRandom();
  }
  return lastTimeText + lastRandomHead + BASE32[lastRandom[RANDOM_CHARS - 1]!];
}

/** A new id for a resource: its prefix, an underscore and a time-sortable ULID, e.g. `evt_01JD…`. */
export function newId(kind: IdKind, nowMs?: number): string {
  return `${ID_PREFIXES[kind]}_${newUlid(nowMs)}`;
}

/** Whether `value` has the shape of an id of this kind (it may still not exist). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return value.startsWith(prefix) && ULID_PATTERN.test(value.slice(prefix.length));
}

/** The JSON-schema pattern of an id of this kind, for request validation. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_[0-9A-HJKMNP-TV-Z]{26}$`;
}

/** The smallest id of this kind made at `timeMs` or later: a lower bound for `id >= …` range scans. */
export function firstIdAt(kind: IdKind, timeMs: number): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(Math.max(0, Math.floor(timeMs)))}${'0'.repeat(16)}`;
}

/** Milliseconds since the epoch encoded in a ULID-based id. */
export function idTimeMs(id: string): number {
  const ulid = id.slice(id.indexOf('_') + 1);
  let time = 0;
  for (const char of ulid.slice(0, TIME_CHARS)) time = time * 32 + BASE32.indexOf(char);
  return time;
}

/** An unguessable URL-safe token of `bytes` random bytes (base64url, no padding). */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

/** Bytes of randomness in an ingest id: 192 bits, above the 128 DESIGN.md asks for. */
export const INGEST_ID_BYTES = 24;

/** A new ingest id, the unguessable last segment of an endpoint's receiving URL. */
export function newIngestId(): string {
  return randomToken(INGEST_ID_BYTES);
}
