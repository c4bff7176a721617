/**
 * A PATH as on a machine with Node and npm but no PostgreSQL installed: every command of
 * the system's bin directories except PostgreSQL's own (pg_dump, pg_restore, psql, initdb,
 * postgres …; this machine has its client tools in /usr/bin), with the repo's Node 24 first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = new URL('../../', import.meta.url).pathname;
const SYSTEM_BIN_DIRS = ['/usr/local/bin', '/usr/bin', '/bin', '/usr/local/sbin', '/usr/sbin', '/sbin'];
/** The commands of Debian's and PostgreSQL's postgresql packages, and anything named pg_*. */
const POSTGRES_COMMAND = /^(pg_.*|psql|postgres|postmaster|initdb|createdb|dropdb|createuser|dropuser|createlang|droplang|clusterdb|reindexdb|vacuumdb|vacuumlo|oid2name|pgbench|ecpg)$/;

/** Makes `dir` and fills it with links to those commands; returns it, to be the whole PATH. */
export function pathWithoutPostgres(dir: string): string {
  mkdirSync(dir, { recursive: true });
  symlinkSync(realpathSync(join(repoRoot, 'node_modules', '.bin', 'node')), join(dir, 'node'));
  const linked = new Set(['node']);
  for (const bin of SYSTEM_BIN_DIRS) {
    if (!existsSync(bin)) continue;
    for (const command of readdirSync(bin)) {
      if (linked.has(command) || POSTGRES_COMMAND.test(command)) continue;
      linked.add(command);
      symlinkSync(join(bin, command), join(dir, command));
    }
  }
  return dir;
}

/** Whether `command` can be found on `path` (bash's command -v). */
export function onPath(command: string, path: string): boolean {
  return spawnSync('bash', ['-c', `command -v ${command}`], { env: { PATH: path } }).status === 0;
}
