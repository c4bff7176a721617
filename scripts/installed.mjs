// The last step of `npm install` (package.json "prepare"): one line saying the install
// worked and which Node runs the repository, since .npmrc keeps npm to errors only (its
// EBADENGINE warnings about the Node that ran npm do not apply: nothing else runs on it).
const npmNode = process.env.npm_node_execpath && process.env.npm_node_execpath !== process.execPath ? ` (npm itself ran on the Node at ${process.env.npm_node_execpath})` : '';
process.stdout.write(`hook: installed. npm start runs the relay and npm test the tests, on the repository's Node ${process.versions.node}${npmNode}.\n`);
