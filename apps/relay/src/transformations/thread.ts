/**
 * A transformation thread (see pool.ts): one QuickJS sandbox runner of its own, one task
 * at a time. A delivery's whole preparation happens here (parsing the stored body,
 * the filter, the transformation, serialising what it returned), so none of it holds the
 * relay's event loop. Tasks run strictly one after another, in the order they came (the
 * pool may send the next before this one is done, so the thread never waits for it), and
 * each answer carries the CPU time its task took on this thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { prepareDelivery, type PreparedDelivery } from '../delivery/prepare.ts';
import { QuickJsTransformRunner } from './runner.ts';
import { ownBytes, type ThreadReply, type ThreadSettings, type ThreadTask } from './thread-protocol.ts';

const settings = workerData as ThreadSettings;
const runner = new QuickJsTransformRunner(
  { timeoutMs: settings.timeoutMs, memoryBytes: settings.memoryBytes },
  { ...(settings.maxCachedSandboxes !== undefined ? { maxCachedSandboxes: settings.maxCachedSandboxes } : {}), ...(settings.poolMemoryBytes !== undefined ? { poolMemoryBytes: settings.poolMemoryBytes } : {}) },
);
const port = parentPort!;
/** Most answers held back to go in one message (the pool sends a thread only cheap work ahead, see pool.ts). */
const MAX_REPLIES_PER_MESSAGE = 32;

/** A Buffer over what structured cloning delivered as a plain Uint8Array (no copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

async function perform(task: ThreadTask): Promise<unknown> {
  switch (task.kind) {
    case 'prepare': {
      const prepared: PreparedDelivery = await prepareDelivery(runner, { ...task.delivery, body: asBuffer(task.delivery.body) }, task.applyFilter);
      // The encoded body crosses back to the event loop: on its own, not in its pooled slab.
      if (prepared.kind === 'send' && prepared.request) prepared.request.body = asBuffer(ownBytes(prepared.request.body));
      return prepared;
    }
    case 'run':
      return runner.run(task.code, task.request, task.context);
    case 'check':
      return runner.check(task.code);
  }
}

const waiting: ThreadTask[] = [];
let draining = false;

/** Answers not yet posted: they go together when the thread has nothing more to do (one message, one wake-up of the event loop). */
let replies: ThreadReply[] = [];

async function drain(): Promise<void> {
  draining = true;
  for (let task = waiting.shift(); task; task = waiting.shift()) {
    const started = process.threadCpuUsage();
    let reply: ThreadReply;
    try {
      const value = await perform(task);
      const used = process.threadCpuUsage(started);
      reply = { id: task.id, ok: true, value, cpuMs: (used.user + used.system) / 1000 };
    } catch (error) {
      const used = process.threadCpuUsage(started);
      reply = { id: task.id, ok: false, error: error instanceof Error ? error.message : String(error), cpuMs: (used.user + used.system) / 1000 };
    }
    replies.push(reply);
    if (waiting.length === 0 || replies.length >= MAX_REPLIES_PER_MESSAGE) {
      port.postMessage(replies);
      replies = [];
    }
  }
  draining = false;
}

port.on('message', (tasks: ThreadTask[]) => {
  waiting.push(...tasks);
  if (!draining) void drain();
});
