// Fails loudly when npm scripts run on a Node older than the repo supports.
// The devDependency `node@^24` puts Node 24 on every npm script's PATH; seeing an
// older version here means the install did not complete or a script was run
// with the system Node directly. 22.18 is the first Node that runs .ts files without flags.
const MINIMUM = [22, 18];
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(
    `hook: Node ${process.versions.node} is too old; this repo needs Node >= ${MINIMUM.join('.')} (it ships Node 24 as a devDependency).\n` +
      'Fix: run "npm install" and use the npm scripts (npm start, npm test), which put Node 24 on the PATH.\n',
  );
  process.exit(1);
}
