/**
 * How `hook` starts and where it draws: the launcher re-runs the CLI with the repo's
 * Node 24 when the Node on PATH is too old (passing stdio, exit code and signals
 * through), and a terminal gets ink's rendering while pipes get plain text.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOOK_BIN, HookUser, repoRoot, signedUpUser } from '../support/cli.ts';

/** The repository's Node 24, whatever Node runs the tests. */
const NODE_24 = join(repoRoot, 'node_modules', 'node', 'bin', 'node');
const LAUNCHER = realpathSync(HOOK_BIN);
const CLI_VERSION: string = JSON.parse(readFileSync(join(repoRoot, 'apps', 'cli', 'package.json'), 'utf8')).version;

/** Preloads for the launcher's own process: one pretends to be Node 20, one marks what this process itself writes to stdout. */
const PRETEND_OLD_NODE = "Object.defineProperty(process.versions, 'node', { value: '20.0.0' });";
const MARK_OWN_STDOUT = "const write = process.stdout.write.bind(process.stdout); process.stdout.write = (chunk, ...rest) => write('LAUNCHER:' + chunk, ...rest);";

/** The first child process of `parent` (0 if none), from /proc: no `ps` needed. */
function childPidOf(parent: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent) return Number(entry);
  }
  return 0;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function preload(code: string): string[] {
  return ['--import', `data:text/javascript,${encodeURIComponent(code)}`];
}

interface Launched {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function launch(nodeArgs: string[], args: string[], home: HookUser): Promise<Launched> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_24, [...nodeArgs, LAUNCHER, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home.home, XDG_CONFIG_HOME: home.configHome },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const signedUp = signedUpUser();
const { user } = signedUp;

describe('the launcher', () => {
  it('runs the CLI in its own process on a new enough Node', async () => {
    const result = await launch(preload(MARK_OWN_STDOUT), ['--version'], user);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`LAUNCHER:${CLI_VERSION}\n`);
  });

  it('on an old Node, re-runs the CLI with the repo\'s Node 24, output straight through', async () => {
    const result = await launch([...preload(PRETEND_OLD_NODE), ...preload(MARK_OWN_STDOUT)], ['--version'], user);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${CLI_VERSION}\n`); // written by the child, not through the launcher's stdout
  });

  it('passes the exit code through', async () => {
    const usage = await launch(preload(PRETEND_OLD_NODE), ['endpoints', 'create'], user);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("Missing required argument 'name'");
    const ok = await launch(preload(PRETEND_OLD_NODE), ['whoami', '--json'], user);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).api_url).toBe(signedUp.relay.baseUrl);
  });

  it('passes SIGTERM on to the CLI and ends the same way', async () => {
    const child = spawn(NODE_24, [...preload(PRETEND_OLD_NODE), LAUNCHER, 'send', 'anything', '--data', '-'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome },
      stdio: ['pipe', 'pipe', 'pipe'], // stdin stays open: the CLI waits for the body
    });
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    await expect.poll(() => childPidOf(child.pid!), { timeout: 5000 }).toBeGreaterThan(0);
    const cliPid = childPidOf(child.pid!);
    child.kill('SIGTERM');
    expect(await closed).toEqual({ code: null, signal: 'SIGTERM' });
    // The CLI process is gone too (allowing a moment for the system to reap it).
    await expect.poll(() => isAlive(cliPid), { timeout: 1000 }).toBe(false);
  });
});

/** What `command` writes when run on a pseudo-terminal (util-linux `script`). Asynchronous: the relay answers from this process. */
function onPseudoTerminal(command: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`script exited ${code}: ${output}`));
    });
  });
}

describe('output on a terminal', () => {
  it('renders tables with ink on a TTY and as plain text in a pipe', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'tty-check']);
    const command = `stty cols 200 rows 40; exec ${HOOK_BIN} endpoints list`;
    // `script` runs the command on a pseudo-terminal, as an interactive shell would.
    const onTerminal = await onPseudoTerminal(command, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome, TERM: 'xterm-256color' });
    expect(onTerminal).toMatch(/\x1b\[1mID\x1b\[22m/); // ink: bold headers
    expect(onTerminal).toContain('\x1b[32mactive\x1b[39m'); // ink: a green status
    const visible = onTerminal.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
    // The user's first endpoint: the default of `hook listen`, marked after its name.
    expect(visible).toMatch(new RegExp(`^${endpoint.id} +tty-check \\(default\\) +active +${endpoint.url} +cli *$`, 'm'));

    const piped = await user.run(['endpoints', 'list']);
    expect(piped.stdout).not.toContain('\x1b');
    expect(piped.stdout).toMatch(new RegExp(`^${endpoint.id} +tty-check \\(default\\) +active +${endpoint.url} +cli$`, 'm'));
  });
});
