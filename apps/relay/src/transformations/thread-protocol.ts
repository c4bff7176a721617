/** The messages between the transformation pool (pool.ts) and its threads (thread.ts): each message is an array of tasks, or of replies. */
import type { StoredDelivery } from '../delivery/prepare.ts';
import type { TransformContext, TransformLimits, TransformRequest } from './types.ts';

/** What each thread is started with. */
export interface ThreadSettings extends TransformLimits {
  maxCachedSandboxes?: number;
  poolMemoryBytes?: number;
}

/** A stored delivery as it crosses to a thread: the body arrives as a Uint8Array. */
export type ThreadDelivery = Omit<StoredDelivery, 'body'> & { body: Uint8Array };

export type ThreadTask =
  | { id: number; kind: 'prepare'; delivery: ThreadDelivery; applyFilter: boolean }
  | { id: number; kind: 'run'; code: string; request: TransformRequest; context: TransformContext }
  | { id: number; kind: 'check'; code: string };

/** A task's answer, with the CPU time it took on its thread. */
export type ThreadReply =
  | { id: number; ok: true; value: unknown; cpuMs: number }
  | { id: number; ok: false; error: string; cpuMs: number };

/**
 * `bytes` in an ArrayBuffer of its own (a copy when it is a view into a larger one).
 * Structured cloning copies a view's WHOLE ArrayBuffer, and a small Buffer is a view into
 * a slab shared by many (Buffer.poolSize: 64 KiB on Node 24): a 1 KiB body sent as it is
 * costs a 64 KiB copy on each side of the trip, and 64 KiB of garbage behind it.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}
