// Fails loudly when npm scripts run on a Node older than the repo supports.
// The devDependency `node@^24` puts Node 24 on every npm script's PATH; seeing an
// older version here means the install did not complete or a script was run
// with the system Node directly.
const MINIMUM_NODE_MAJOR = 22;
const major = Number(process.versions.node.split('.')[0]);
if (major < MINIMUM_NODE_MAJOR) {
  process.stderr.write(
    `hook: Node ${process.versions.node} is too old; this repo needs Node >= ${MINIMUM_NODE_MAJOR} (it ships Node 24 as a devDependency).\n` +
      `Fix: run "npm install" and use the npm scripts (npm start, npm test), which put Node 24 on the PATH.\n`,
  );
  process.exit(1);
}
