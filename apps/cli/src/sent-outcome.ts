/**
 * What `hook send` and `hook trigger` say became of a request an ingest URL took. The
 * relay names the outcome on every such answer (X-Hook-Event-Status, docs/api.md#ingest),
 * whatever body the endpoint answers with: its custom response, a handshake's answer.
 */
import type { Endpoint, IngestSent } from '@hook/client';

export interface SentOutcome {
  /** Follows "<status>, N bytes" in the result line: what a duplicate or a handshake means ('' for pending). */
  meaning: string;
  /** Added to the --json result: a handshake's stored type. */
  fields: { type?: string };
}

export function sentOutcome(sent: IngestSent, endpoint: Endpoint): SentOutcome {
  if (sent.status === 'duplicate') return { meaning: `: its dedupe key was already stored, as ${sent.id}; nothing was stored or delivered again`, fields: {} };
  if (sent.status === 'handshake') {
    const provider = endpoint.handshake?.provider;
    const type = provider === undefined ? undefined : `${provider}.handshake`;
    return { meaning: `: the relay answered the handshake and stored it${type === undefined ? '' : ` as ${type}`}; it is not delivered`, fields: type === undefined ? {} : { type } };
  }
  return { meaning: '', fields: {} };
}
