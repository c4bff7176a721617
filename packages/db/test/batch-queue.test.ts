/**
 * BatchQueue's gathering (gatherMs): under load a batch waits a little for more items,
 * at rest an item goes at once.
 */
import { describe, expect, it } from 'vitest';
import { BatchQueue, ItemFailure } from '../src/batch-queue.ts';

function recordingQueue(options: { gatherMs: number; gatherItems?: number }) {
  const batches: number[][] = [];
  const queue = new BatchQueue<number, number>({
    flush: async (items) => {
      batches.push([...items]);
      return items;
    },
    ...options,
  });
  return { queue, batches };
}

describe('BatchQueue gathering', () => {
  it('sends an item at once at rest, and under load waits for gatherItems before the next statement', async () => {
    const { queue, batches } = recordingQueue({ gatherMs: 60_000, gatherItems: 3 });
    // At rest 1 goes at once (a 60 s wait would time the test out); 2 and 3, queued
    // behind its statement, go together after it.
    await Promise.all([queue.add(1), queue.add(2), queue.add(3)]);
    expect(batches).toEqual([[1], [2, 3]]);
    // The last statement carried two: under load, the next waits for three items.
    const fourToSix = [queue.add(4), queue.add(5)];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches).toHaveLength(2); // 4 and 5 wait for a third
    fourToSix.push(queue.add(6));
    await Promise.all(fourToSix);
    expect(batches).toEqual([[1], [2, 3], [4, 5, 6]]);
  });

  it('starts a gathering batch when gatherMs is up, with what is queued', async () => {
    const { queue, batches } = recordingQueue({ gatherMs: 30, gatherItems: 50 });
    await Promise.all([queue.add(1), queue.add(2), queue.add(3)]);
    expect(batches).toEqual([[1], [2, 3]]);
    const startedMs = performance.now();
    await queue.add(4);
    expect(batches).toEqual([[1], [2, 3], [4]]);
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(25);

  });

  it('never waits without gatherMs', async () => {
    const { queue, batches } = recordingQueue({ gatherMs: 0 });
    await Promise.all([queue.add(1), queue.add(2), queue.add(3)]);
    await queue.add(4);
    expect(batches).toEqual([[1], [2, 3], [4]]);
    await queue.drain();
  });
});

describe('BatchQueue item failures', () => {
  it('fails only the item a flush gave an ItemFailure, and writes nothing again (the rest of its statement committed)', async () => {
    const flushed: number[][] = [];
    const queue = new BatchQueue<number, string>({
      flush: async (items) => {
        flushed.push([...items]);
        return items.map((item) => (item === 2 ? new ItemFailure(new Error('two could not be stored')) : `stored ${item}`));
      },
    });
    const outcomes = await Promise.allSettled([queue.add(1), queue.add(2), queue.add(3)]);
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'stored 1' },
      { status: 'rejected', reason: new Error('two could not be stored') },
      { status: 'fulfilled', value: 'stored 3' },
    ]);
    // 1 alone, then 2 and 3 together; neither written again one by one (as after a flush that throws)
    expect(flushed).toEqual([[1], [2, 3]]);
  });
});
