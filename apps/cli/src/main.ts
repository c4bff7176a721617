/**
 * The `hook` entry point (bin/hook.js imports it): the one place that reads
 * process.env and process.argv, and that sets the exit code.
 */
import { homedir } from 'node:os';
import { readEnvironment } from './environment.ts';
import { run } from './run.ts';

// `hook events list | head -1`: a reader that goes away is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: readEnvironment(process.env, homedir()),
});
