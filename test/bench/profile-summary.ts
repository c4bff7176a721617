/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, e.g. from `BENCH_CPU_PROF=dir npm run
 * bench:ingest`): where the process's time went, by self time, grouped by where the code
 * lives (a package under node_modules, this repository's code, Node's internals, the
 * garbage collector, idle), and the functions with the most self time.
 *
 *   node test/bench/profile-summary.ts <file.cpuprofile> [top=30] [requests] [from_s] [to_s]
 *
 * With `requests` (how many requests the profiled process answered) each figure is also
 * given in µs per request. `from_s`/`to_s` keep only the samples taken that many seconds
 * after the profile began (leave out start-up: loading modules, compiling schemas).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg, requestsArg, fromArg, toArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node test/bench/profile-summary.ts <file.cpuprofile> [top=30] [requests] [from_s] [to_s]\n');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const requests = requestsArg ? Number(requestsArg) : null;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

const fromUs = Number(fromArg ?? 0) * 1e6;
const toUs = toArg ? Number(toArg) * 1e6 : Number.POSITIVE_INFINITY;

/** Self time per node id, µs, of the samples in the window. */
const self = new Map<number, number>();
let at = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at >= fromUs && at < toUs) self.set(id, (self.get(id) ?? 0) + delta);
});

function placeOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(garbage collector)') return '(garbage collector)';
  if (functionName === '(program)') return '(program: native, not attributed)';
  if (!url) return '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const repo = /\/(apps|packages)\/([^/]+)\/src\/(.*)$/.exec(url);
  return repo ? `${repo[1]}/${repo[2]}/${repo[3]!.split('/').slice(0, -1).join('/') || '.'}` : url;
}

const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((sum, [, us]) => sum + us, 0);
const busy = total - idle;
const cell = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%${requests ? ` ${(us / requests).toFixed(1).padStart(7)} µs/req` : ''}`;

const places = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, us] of self) {
  const node = byId.get(id)!;
  const place = placeOf(node);
  if (place === '(idle)') continue;
  places.set(place, (places.get(place) ?? 0) + us);
  const name = `${node.callFrame.functionName || '(anonymous)'}  ${node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(apps|packages)\//, '$1/')}:${node.callFrame.lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + us);
}

const lines = [`profile: ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s (window ${fromUs / 1e6}–${Math.min(toUs, profile.endTime - profile.startTime) / 1e6} s), busy ${(busy / 1000).toFixed(0)} ms${requests ? `, ${requests} requests, ${(busy / requests).toFixed(1)} µs busy per request` : ''}`, '', 'self time by place:'];
for (const [place, us] of [...places].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${cell(us)}  ${place}`);
lines.push('', 'self time by function:');
for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${cell(us)}  ${name}`);
process.stdout.write(`${lines.join('\n')}\n`);
