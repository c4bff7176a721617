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
