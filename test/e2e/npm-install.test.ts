/**
 * `npm install` as the README has a newcomer run it, on a Node older than the packages'
 * "engines" (the machine's own; the repository brings Node 24 and runs everything else on
 * it): no wall of EBADENGINE warnings, and an error is still shown. npm runs here as it
 * would there, the npm that runs this test on the Node 22.12 the test workspace installs,
 * over a copy of the repository's manifests, lockfile and .npmrc (a dry run, offline:
 * nothing is fetched or written).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.ts';

const OLD_NODE = join(repoRoot, 'test', 'node_modules', 'node', 'bin', 'node');
const FILES = ['.npmrc', 'package.json', 'package-lock.json', 'apps/cli/package.json', 'apps/relay/package.json', 'packages/client/package.json', 'packages/core/package.json', 'packages/db/package.json', 'packages/mcp/package.json', 'test/package.json'];

/** npm's own entry script: the npm running this test, else the first `npm` on PATH. */
function npmCli(): string {
  if (process.env.npm_execpath?.endsWith('npm-cli.js')) return process.env.npm_execpath;
  const onPath = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'npm')).find((file) => existsSync(file));
  if (!onPath) throw new Error('no npm on PATH');
  return realpathSync(onPath);
}

const work = mkdtempSync(join(tmpdir(), 'hook-npm-install-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function copyRepository(): string {
  const dir = mkdtempSync(join(work, 'repo-'));
  for (const file of FILES.filter((name) => existsSync(join(repoRoot, name)))) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(repoRoot, file), join(dir, file));
  }
  return dir;
}

function npmInstall(cwd: string): Promise<{ code: number; stderr: string }> {
  const args = [npmCli(), 'install', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'];
  return new Promise((resolve) => {
    execFile(OLD_NODE, args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, npm_config_cache: join(work, 'cache') }, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr });
    });
  });
}

describe('npm install on a Node older than the packages want', () => {
  it('prints no warnings about engines, and still prints an error', async () => {
    expect(existsSync(OLD_NODE), `${OLD_NODE} is missing: run npm install`).toBe(true);
    const clean = await npmInstall(copyRepository());
    expect(clean.code).toBe(0);
    expect(clean.stderr).toBe('');

    const broken = copyRepository();
    writeFileSync(join(broken, 'package.json'), '{ "name": "hook", ');
    const failed = await npmInstall(broken);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/npm error/);
  });
});
