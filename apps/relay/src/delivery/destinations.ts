import { lookup } from 'node:dns/promises';
import { DESTINATION_NOT_ALLOWED, DESTINATION_URL_INVALID, HookError, isPrivateAddress, isPrivateHostname } from '@hook/core';

/** How long endpoint creation waits for DNS before accepting a destination (delivery checks again anyway). */
const DNS_CHECK_TIMEOUT_MS = 2000;

/**
 * The check every destination URL passes before it is stored (an endpoint's or a
 * destination's `url`, the notification URL; `field` names it in the problem). The URL
 * must parse as the sender will parse it: the schema's `uri` format follows RFC 3986, which
 * allows what WHATWG's URL parser refuses (`http://127.0.0.1%09:29081/`), and a URL stored
 * unparsable could never be delivered to. Unless the relay allows private destinations,
 * its host must not be, or resolve now to, a private, loopback, link-local or metadata
 * address. A name that does not resolve yet is accepted: every delivery resolves it again
 * and refuses private addresses then.
 */
export async function checkDestinationUrl(url: string, field: string, { allowPrivate }: { allowPrivate: boolean }): Promise<void> {
  let hostname: string;
  try {
    hostname = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch (error) {
    const message = `is not a URL a request can be sent to (${(error as Error).message})`;
    throw new HookError(DESTINATION_URL_INVALID, [JSON.stringify(url), (error as Error).message], [{ field, message }]);
  }
  if (allowPrivate) return;
  if (isPrivateHostname(hostname)) throw new HookError(DESTINATION_NOT_ALLOWED, [url, hostname]);
  let addresses: { address: string }[] = [];
  try {
    addresses = await Promise.race([
      lookup(hostname, { all: true }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), DNS_CHECK_TIMEOUT_MS).unref()),
    ]);
  } catch {
    return;
  }
  const refused = addresses.find((entry) => isPrivateAddress(entry.address));
  if (refused) throw new HookError(DESTINATION_NOT_ALLOWED, [url, refused.address]);
}
