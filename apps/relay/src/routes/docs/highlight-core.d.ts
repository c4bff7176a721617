// highlight.js declares types for its full build and its languages, not for lib/core
// (the build without languages, so only the ones the docs use are loaded).
declare module 'highlight.js/lib/core' {
  import type { HLJSApi } from 'highlight.js';
  const hljs: HLJSApi;
  export default hljs;
}
