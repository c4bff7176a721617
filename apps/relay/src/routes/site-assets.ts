import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const SITE_DIR = new URL('../site/', import.meta.url);
/** The design shared by every page (src/site/): tokens, the theme switch and the inspector the console and playground share. */
const ASSETS = [
  { url: '/assets/tokens.css', file: 'tokens.css', type: 'text/css; charset=utf-8' },
  { url: '/assets/inspector.css', file: 'inspector.css', type: 'text/css; charset=utf-8' },
  { url: '/assets/theme.js', file: 'theme.js', type: 'text/javascript; charset=utf-8' },
  // The docs site and the landing page: layout, search, copy buttons.
  { url: '/assets/docs.css', file: 'docs.css', type: 'text/css; charset=utf-8' },
  { url: '/assets/docs.js', file: 'docs.js', type: 'text/javascript; charset=utf-8' },
];

export type ContentEncoding = 'br' | 'gzip';

/** A file's bytes as they are, and compressed (each made once: read from disk, or compressed at the first request that takes it). */
export interface AssetBody {
  identity: Buffer;
  encoded: Record<ContentEncoding, () => Promise<Buffer>>;
}

/**
 * The encoding to send, by the request's accept-encoding: brotli if it takes it (a
 * fifth smaller than gzip on these files), else gzip, else none. A coding with q=0 is
 * refused.
 */
export function chosenEncoding(acceptEncoding: string | undefined): ContentEncoding | undefined {
  const accepted = new Set<string>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [coding, ...params] = part.split(';').map((piece) => piece.trim());
    const q = params.find((param) => param.startsWith('q='));
    if (coding && !(q && Number(q.slice(2)) === 0)) accepted.add(coding);
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

/** Sends an asset compressed when the browser accepts it; the answer varies by accept-encoding, so caches keep each form apart. */
export async function sendAsset(request: FastifyRequest, reply: FastifyReply, body: AssetBody): Promise<FastifyReply> {
  reply.header('vary', 'accept-encoding');
  const encoding = chosenEncoding(request.headers['accept-encoding']);
  if (!encoding) return reply.send(body.identity);
  return reply.header('content-encoding', encoding).send(await body.encoded[encoding]());
}

function once(make: () => Promise<Buffer>): () => Promise<Buffer> {
  let made: Promise<Buffer> | undefined;
  return () => (made ??= make());
}

/** An asset compressed in memory, each form at the first request that takes it (a few KB: milliseconds, once). */
export function compressedInMemory(content: Buffer): AssetBody {
  return {
    identity: content,
    encoded: {
      br: once(() => promisify(brotliCompress)(content, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: content.length, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } })),
      gzip: once(() => promisify(gzip)(content, { level: constants.Z_BEST_COMPRESSION })),
    },
  };
}

/** `/assets/*`: the shared design's files, read once at start, compressed for browsers that accept it. */
export async function siteAssets(app: FastifyInstance): Promise<void> {
  for (const asset of ASSETS) {
    const body = compressedInMemory(await readFile(new URL(asset.file, SITE_DIR)));
    app.get(asset.url, { schema: { hide: true } }, (request, reply) =>
      sendAsset(request, reply.type(asset.type)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-cache'), body));
  }
}
