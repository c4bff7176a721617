/**
 * Any other HMAC (`hmac`): a sender with its own scheme, described by the endpoint's
 * settings: the header carrying the signature, the hash (`sha1`, `sha256`, `sha512`), its
 * encoding (`hex`, `base64`), text before it (`sha256=`), and what is signed: the body, or
 * `<timestamp>.<body>` with the timestamp from another header, within tolerance. The
 * secret's UTF-8 bytes are the key. There is no signer: the scheme is the endpoint's own,
 * which `hook send --resign` does not know.
 */
import { createSecretKey } from 'node:crypto';
import { anyMatches, decodeSignature, hmacOf, isUnixSeconds, withinTolerance } from '../verification.ts';
import { defineProvider } from './provider.ts';

export const hmac = defineProvider({
  name: 'hmac',
  title: 'Any other HMAC',
  whyNoSigner: 'the generic hmac scheme\'s headers, hash and signed text are the endpoint\'s own settings, which hook send does not know',
  verification: {
    create(settings, secret, { ok, fail }) {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      const header = settings.header!.toLowerCase();
      const algorithm = settings.algorithm ?? 'sha256';
      const encoding = settings.encoding ?? 'hex';
      const prefix = settings.prefix ?? '';
      const timestampHeader = settings.signed === 'timestamp.body' ? settings.timestamp_header!.toLowerCase() : null;
      return (headers, body, nowMs) => {
        const value = headers[header];
        if (value === undefined) return fail('missing_header', header);
        let timestamp: string | null = null;
        if (timestampHeader !== null) {
          const sent = headers[timestampHeader];
          if (sent === undefined) return fail('missing_header', timestampHeader);
          timestamp = sent.trim();
          if (!isUnixSeconds(timestamp)) return fail('malformed_header', timestampHeader);
        }
        const text = value.trim();
        const signature = text.startsWith(prefix) ? decodeSignature(text.slice(prefix.length), encoding) : null;
        if (signature === null || signature.length === 0) return fail('malformed_header', header);
        if (!anyMatches(hmacOf(algorithm, key, timestamp === null ? '' : `${timestamp}.`, body), [signature])) return fail('no_signature_matches', header);
        return timestamp === null || withinTolerance(timestamp, settings.tolerance_seconds, nowMs) ? ok : fail('timestamp_outside_tolerance', timestampHeader!);
      };
    },
  },
});
