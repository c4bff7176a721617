/**
 * A real DNS server on a local UDP port, answering TXT questions from records a test sets:
 * the relay's resolver (HOOK_DNS_SERVERS) asks it over the wire, exactly as it would ask a
 * provider's. Only what custom-domain verification needs: TXT answers, NXDOMAIN for an
 * unknown name, an empty NOERROR for a known name asked another type (RFC 1035 §4.1).
 */
import { createSocket, type RemoteInfo } from 'node:dgram';

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as HOOK_DNS_SERVERS takes it. */
  address: string;
  /** Serves these TXT values at `name` from now on (an empty list: the name exists, no TXT record). */
  setTxt(name: string, values: readonly string[]): void;
  /** Forgets `name`: asked again, it is NXDOMAIN. */
  remove(name: string): void;
  /** Questions asked so far, as `<name> <type number>`. */
  readonly questions: readonly string[];
  close(): Promise<void>;
}

const TYPE_TXT = 16;
const CLASS_IN = 1;
const RCODE_NXDOMAIN = 3;
const RCODE_FORMERR = 1;

/** The question's name (lower-cased) and where the question section ends, or null for a message this server does not read. */
function readQuestion(message: Buffer): { name: string; type: number; end: number } | null {
  if (message.length < 12 || message.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let offset = 12;
  while (offset < message.length) {
    const length = message[offset]!;
    if (length === 0) break;
    if (length > 63) return null; // compression pointers never appear in a question's first name
    labels.push(message.subarray(offset + 1, offset + 1 + length).toString('latin1'));
    offset += 1 + length;
  }
  if (offset + 5 > message.length) return null;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(offset + 1), end: offset + 5 };
}

/** One TXT resource record naming the question (pointer 0xc00c), its value cut into strings of at most 255 bytes. */
function txtRecord(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const strings: Buffer[] = [];
  for (let i = 0; i < bytes.length || strings.length === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    strings.push(Buffer.concat([Buffer.from([chunk.length]), chunk]));
  }
  const rdata = Buffer.concat(strings);
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0);
  head.writeUInt16BE(TYPE_TXT, 2);
  head.writeUInt16BE(CLASS_IN, 4);
  head.writeUInt32BE(0, 6); // TTL 0: no resolver keeps the answer, so a changed record is seen at once
  head.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([head, rdata]);
}

function answer(query: Buffer, records: ReadonlyMap<string, readonly string[]>, asked: string[]): Buffer {
  const question = readQuestion(query);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.length >= 2 ? query.readUInt16BE(0) : 0, 0);
  const recursionDesired = query.length >= 3 ? query[2]! & 0x01 : 0;
  if (!question) {
    header.writeUInt16BE(0x8000 | (recursionDesired << 8) | 0x0080 | RCODE_FORMERR, 2);
    return header;
  }
  asked.push(`${question.name} ${question.type}`);
  const values = records.get(question.name);
  const answers = values && question.type === TYPE_TXT ? values.map(txtRecord) : [];
  // QR, the query's RD, RA; NXDOMAIN when the name has no records at all.
  header.writeUInt16BE(0x8000 | (recursionDesired << 8) | 0x0080 | (values ? 0 : RCODE_NXDOMAIN), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  return Buffer.concat([header, query.subarray(12, question.end), ...answers]);
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const socket = createSocket('udp4');
  const records = new Map<string, readonly string[]>();
  const questions: string[] = [];
  socket.on('message', (query: Buffer, peer: RemoteInfo) => socket.send(answer(query, records, questions), peer.port, peer.address));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${socket.address().port}`,
    setTxt: (name, values) => void records.set(name.toLowerCase().replace(/\.$/, ''), [...values]),
    remove: (name) => void records.delete(name.toLowerCase().replace(/\.$/, '')),
    questions,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
