/**
 * Loaded into the relay by bench:soak (`node --import …/memory-probe.ts`): every
 * BENCH_MEMORY_EVERY_MS it appends the process's memory (rss, heapUsed, heapTotal,
 * external, in bytes) as one JSON line to BENCH_MEMORY_FILE. The relay itself knows
 * nothing of it.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.BENCH_MEMORY_FILE;
const everyMs = Number(process.env.BENCH_MEMORY_EVERY_MS ?? 5000);

if (file) {
  const sample = (): void => {
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ atMs: Date.now(), rss, heapUsed, heapTotal, external })}\n`);
  };
  sample();
  setInterval(sample, everyMs).unref();
}
