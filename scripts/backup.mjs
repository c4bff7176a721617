// `npm run backup -- <file>` and `npm run restore -- <file>`: checks the Node version, then
// runs apps/relay/src/backup.ts in this same process (exec'd by npm's shell, as `npm start`
// is), so Ctrl-C reaches it and it can stop cleanly (remove a partial archive, roll back).
import './require-node.mjs';

await import('../apps/relay/src/backup.ts');
