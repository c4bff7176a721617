/**
 * The SQL a relay really sends: a TCP proxy in front of PostgreSQL that reads the
 * frontend side of the wire protocol (simple queries, and Parse/Bind of the extended
 * protocol with each execution's parameters) and forwards every byte unchanged.
 *
 * Why on the wire and not by wrapping a client's `query`: the relay talks to PostgreSQL
 * through several copies of node-postgres (the ORM's, the queue executor's, the LISTEN
 * connection's), and a named statement is parsed once per connection and then only
 * bound; the wire sees every one of them, whichever module sent it.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** One execution of a statement: its text and the parameters it ran with. */
export interface CapturedStatement {
  /** The prepared statement's name ('' when unnamed or a simple query). */
  name: string;
  text: string;
  /** Text parameters as strings, binary ones as Buffers, NULL as null. */
  params: (string | Buffer | null)[];
}

export interface SqlCapture {
  /** A connection URL like `databaseUrl` that goes through the proxy. */
  url: string;
  /** Executions recorded while `recording` is on, in the order they were sent. */
  statements: CapturedStatement[];
  recording: boolean;
  close(): Promise<void>;
}

/** Protocol codes of the untyped messages a connection may open with. */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Reads one connection's frontend messages as they stream past. */
class FrontendReader {
  readonly #onExecute: (statement: CapturedStatement) => void;
  /** Statement texts by name, as Parse messages defined them on this connection. */
  readonly #prepared = new Map<string, string>();
  #pending: Buffer = Buffer.alloc(0);
  #started = false;

  constructor(onExecute: (statement: CapturedStatement) => void) {
    this.#onExecute = onExecute;
  }

  push(chunk: Buffer): void {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    for (;;) {
      if (!this.#started) {
        // Startup, SSLRequest, GSSENCRequest, CancelRequest: length then a code, no type byte.
        if (this.#pending.length < 8) return;
        const length = this.#pending.readInt32BE(0);
        if (this.#pending.length < length) return;
        const code = this.#pending.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.#started = true;
        this.#pending = this.#pending.subarray(length);
        continue;
      }
      if (this.#pending.length < 5) return;
      const length = this.#pending.readInt32BE(1);
      if (this.#pending.length < 1 + length) return;
      this.#message(String.fromCharCode(this.#pending[0]!), this.#pending.subarray(5, 1 + length));
      this.#pending = this.#pending.subarray(1 + length);
    }
  }

  #message(type: string, body: Buffer): void {
    let offset = 0;
    const cstring = () => {
      const end = body.indexOf(0, offset);
      const value = body.toString('utf8', offset, end);
      offset = end + 1;
      return value;
    };
    if (type === 'Q') {
      this.#onExecute({ name: '', text: cstring(), params: [] });
    } else if (type === 'P') {
      const name = cstring();
      this.#prepared.set(name, cstring());
    } else if (type === 'B') {
      cstring(); // portal
      const name = cstring();
      const formatCount = body.readInt16BE(offset);
      const formats: number[] = [];
      for (let i = 0; i < formatCount; i++) formats.push(body.readInt16BE(offset + 2 + 2 * i));
      offset += 2 + 2 * formatCount;
      const paramCount = body.readInt16BE(offset);
      offset += 2;
      const params: (string | Buffer | null)[] = [];
      for (let i = 0; i < paramCount; i++) {
        const size = body.readInt32BE(offset);
        offset += 4;
        if (size < 0) {
          params.push(null);
          continue;
        }
        const bytes = Buffer.from(body.subarray(offset, offset + size));
        offset += size;
        const binary = (formatCount === 1 ? formats[0] : formats[i]) === 1;
        params.push(binary ? bytes : bytes.toString('utf8'));
      }
      this.#onExecute({ name, text: this.#prepared.get(name) ?? '', params });
    }
  }
}

/** Starts a proxy to the PostgreSQL server of `databaseUrl`, not yet recording. */
export async function startSqlCapture(databaseUrl: string): Promise<SqlCapture> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  const capture: SqlCapture = {
    url: '',
    statements: [],
    recording: false,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const reader = new FrontendReader((statement) => {
      if (capture.recording) capture.statements.push(statement);
    });
    client.on('data', (chunk: Buffer) => {
      reader.push(chunk);
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(typeof address === 'object' && address ? address.port : 0);
  capture.url = proxied.toString();
  return capture;
}
