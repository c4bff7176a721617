#!/usr/bin/env node
// The `hook` launcher. Plain JavaScript any Node can parse; nothing heavy is loaded
// before the Node version check. It runs in two places:
//
// - In a clone of the repository (src/ is here), the CLI is TypeScript that Node >= 22.18
//   runs as it is. On an older Node (a system Node 20, say) this re-runs the CLI with the
//   Node 24 the repository installs (node_modules/node), passing through stdio, signals
//   and the exit code. It runs the bundle in dist/ (npm run build; npm install and npm
//   test build it) when that is at least as new as every source file it was built from,
//   and the TypeScript sources otherwise, so an edit is never hidden behind an old build.
// - Installed from the npm package (`npm install -g`; no src/), it runs the bundle in
//   dist/, which needs Node >= 22.12 (package.json engines); an older Node gets an error.
//
// The long-running commands (listen, events tail) get a smaller young generation, which
// keeps hook listen well inside its memory budget at a thousand events a second.
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(realpathSync(fileURLToPath(import.meta.url)));
const cliRoot = join(here, '..');
const main = join(cliRoot, 'src', 'main.ts');
/** A clone of the repository, not the installed package (which holds bin/ and dist/ only). */
const fromRepository = existsSync(main);
const MINIMUM_NODE = fromRepository ? [22, 18] : [22, 12];
const [major, minor] = process.versions.node.split('.').map(Number);
/**
 * For the commands that run for hours and handle many events: a smaller V8 young
 * generation (MB of one semi-space), V8's memory-saving mode (a heap that grows less
 * eagerly) and, through the environment, one glibc malloc arena that hands freed memory
 * back sooner. bench:listen at ~3,500 events/s: peak RSS 126–133 MB with the semi-space
 * alone → 93–95 MB with --optimize-for-size too, for ~35% more CPU in hook listen
 * (0.085 → 0.115 ms per event; it idles most of the time there, so forwarding is no slower).
 */
const LONG_RUNNING_FLAGS = ['--max-semi-space-size=2', '--optimize-for-size'];
const LONG_RUNNING_COMMANDS = ['listen', 'tail'];

if (major > MINIMUM_NODE[0] || (major === MINIMUM_NODE[0] && minor >= MINIMUM_NODE[1])) {
  const args = process.argv.slice(2);
  const longRunning = args.some((arg) => LONG_RUNNING_COMMANDS.includes(arg));
  if (longRunning && typeof process.execve === 'function' && !LONG_RUNNING_FLAGS.every((flag) => process.execArgv.includes(flag))) {
    // Same process (execve replaces it), same pid, stdio and signals; now with the flags.
    // The user's environment wins over these malloc settings.
    process.execve(process.execPath, [process.execPath, ...LONG_RUNNING_FLAGS, ...process.execArgv, fileURLToPath(import.meta.url), ...args], { MALLOC_ARENA_MAX: '1', MALLOC_TRIM_THRESHOLD_: '65536', ...process.env });
  }
  if (fromRepository) {
    const { freshBuild } = await import('./fresh-build.js');
    await import(pathToFileURL(freshBuild(cliRoot) ?? main).href);
  } else {
    await import(pathToFileURL(join(cliRoot, 'dist', 'main.js')).href);
  }
} else if (fromRepository) {
  reexec();
} else {
  process.stderr.write(
    `Error: hook needs Node >= ${MINIMUM_NODE.join('.')} and this is Node ${process.versions.node}.\n` +
      `Fix: install Node ${MINIMUM_NODE.join('.')} or newer (Node 24 LTS, say), then run hook again.\n`,
  );
  process.exit(1);
}


/** The nearest node_modules/node/bin/node above this file (the repo's devDependency `node`). */
function bundledNode() {
  for (let directory = here; ; directory = dirname(directory)) {
    const candidate = join(directory, 'node_modules', 'node', 'bin', 'node');
    if (existsSync(candidate)) return candidate;
    if (dirname(directory) === directory) return undefined;
  }
}

function reexec() {
  const node = bundledNode();
  if (!node) {
    process.stderr.write(
      `Error: hook needs Node >= ${MINIMUM_NODE.join('.')} and this is Node ${process.versions.node}.\n` +
        'Fix: run `npm install` in the repository (it installs Node 24), or install Node 22.18 or newer.\n',
    );
    process.exit(1);
  }
  // The launcher again, on the new Node: it picks the build or the sources, and the flags.
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // A terminal sends Ctrl-C (SIGINT) and Ctrl-\ (SIGQUIT) to the whole foreground process
  // group, the child included, so those are passed on only when no terminal is attached
  // (sent with kill to this process alone). Other signals are always passed on.
  const fromTerminal = new Set(process.stdin.isTTY || process.stdout.isTTY || process.stderr.isTTY ? ['SIGINT', 'SIGQUIT'] : []);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']) {
    process.on(signal, () => {
      if (!fromTerminal.has(signal)) child.kill(signal);
    });
  }
  child.on('error', (error) => {
    process.stderr.write(`Error: cannot start ${node}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      // End the same way the child did, so the shell sees the same status.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
}
