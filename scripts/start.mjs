// `npm start`: checks the Node version, then runs the relay in this same process, so
// the signal npm forwards on Ctrl-C or SIGTERM reaches the relay itself (a shell
// between npm and node would swallow it and leave the relay running).
import './require-node.mjs';

await import('../apps/relay/src/server.ts');
