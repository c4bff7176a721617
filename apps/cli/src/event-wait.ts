/**
 * What `hook events wait` counts and how it looks (docs/cli.md#hook-events-wait). It
 * polls the event list, newest first, rather than holding a live stream: a poll that
 * fails (the relay restarting) is just tried again, and each poll reads the events'
 * stored status, so nothing that happened while a connection was down can be missed.
 *
 * Which events count: by default only those received after the wait began. "After" is
 * decided against a snapshot of the newest events taken when it began, not against a
 * clock, so a clock that differs between this machine and the relay changes nothing.
 */
import { InvalidArgumentError } from 'commander';
import type { EventListQuery, EventStatus, EventSummary, HookClient } from '@hook/client';
import { HookApiError, HookNetworkError } from '@hook/client/errors';
import { isId, LIST_LIMIT_MAX, parseDuration } from '@hook/core';
import { parseTimeArgument } from './option-parsers.ts';

/** Events read per page while looking for a match. */
const PAGE_SIZE = LIST_LIMIT_MAX;
/** Pages read per poll at most: a wait that more than this many new events passed without a match reads only the newest. */
const PAGES_PER_POLL_MAX = 10;

/** Where counting starts. */
export type WaitStart =
  /** Events received after the wait began: not among the newest `seen` then, and newer than `floorId` (the oldest of those, when there were more). */
  | { kind: 'snapshot'; seen: ReadonlySet<string>; floorId: string | null }
  /** This event and every later one. */
  | { kind: 'event'; id: string }
  /** Events received at or after this time (ISO 8601). */
  | { kind: 'time'; at: string };

/** What `--since` gives: a start the user names. */
export type SinceStart = Exclude<WaitStart, { kind: 'snapshot' }>;

/** `--timeout`: `30s`, `2m`, `500ms`, `1m30s`, or plain seconds (`30`, `2.5`). Milliseconds. */
export function parseTimeout(value: string): number {
  const text = value.trim();
  const ms = /^\d+(\.\d+)?$/.test(text) ? Math.round(Number(text) * 1000) : parseDuration(text);
  if (ms === null) throw new InvalidArgumentError('must be a duration such as 30s, 2m or 500ms, or plain seconds (30).');
  return ms;
}

/** `--since`: an event id (that event and later ones), or a time as `--since` takes it elsewhere (ISO 8601, a date, or `10m` ago). */
export function parseSince(now: () => number = Date.now): (value: string) => SinceStart {
  const parseTime = parseTimeArgument(now);
  return (value) => {
    if (value.startsWith('evt_')) {
      if (!isId('event', value)) throw new InvalidArgumentError('must be an event id (evt_…) or a time (2026-01-31T12:00:00Z, 2026-01-31, 10m).');
      return { kind: 'event', id: value };
    }
    return { kind: 'time', at: parseTime(value) };
  };
}

/** Whether an event counts, by where counting starts. */
export function countsFrom(start: WaitStart, event: Pick<EventSummary, 'id' | 'received_at'>): boolean {
  switch (start.kind) {
    case 'snapshot':
      return !start.seen.has(event.id) && (start.floorId === null || event.id > start.floorId);
    case 'event':
      return event.id >= start.id;
    case 'time':
      return Date.parse(event.received_at) >= Date.parse(start.at);
  }
}

/** The newest events now, as the start of a wait that counts only what arrives after it. */
export async function snapshotStart(client: HookClient, query: Omit<EventListQuery, 'limit' | 'cursor'>): Promise<WaitStart> {
  const page = await client.events.list({ ...query, limit: PAGE_SIZE });
  return { kind: 'snapshot', seen: new Set(page.data.map((event) => event.id)), floorId: page.next_cursor === null ? null : (page.data.at(-1)?.id ?? null) };
}

export interface PollResult {
  /** The first event to arrive (of those that count) that has the status asked for. */
  match: EventSummary | undefined;
  /** The newest event that counts, whatever its status: what a timeout names when none had the status. */
  newest: EventSummary | undefined;
}

/** One look at the events that count, newest first, stopping at the first that does not. */
export async function pollEvents(client: HookClient, query: Omit<EventListQuery, 'limit' | 'cursor'>, start: WaitStart, status: EventStatus | undefined): Promise<PollResult> {
  let match: EventSummary | undefined;
  let newest: EventSummary | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < PAGES_PER_POLL_MAX; page++) {
    const { data, next_cursor: next } = await client.events.list({ ...query, limit: PAGE_SIZE, cursor });
    for (const event of data) {
      if (!countsFrom(start, event)) return { match, newest };
      newest ??= event;
      if (status === undefined || event.status === status) match = event;
    }
    if (next === null) break;
    cursor = next;
  }
  return { match, newest };
}

/** Whether a failed poll is worth trying again: no answer, or the relay (or a proxy before it) failing or busy. */
export function isPassingFailure(error: unknown): boolean {
  if (error instanceof HookNetworkError) return true;
  return error instanceof HookApiError && (error.status >= 500 || error.status === 429 || error.code === 'unexpected_response');
}

/** A failed poll in words, for the line that says the relay is not answering. */
export function describePassingFailure(error: unknown): string {
  if (error instanceof HookNetworkError) return error.reason;
  if (error instanceof HookApiError) return `${error.status} ${error.code}`;
  return String(error);
}
