import { lookup } from 'node:dns/promises';
import { DESTINATION_NOT_ALLOWED, HookError, isPrivateAddress, isPrivateHostname } from '@hook/core';

/** How long endpoint creation waits for DNS before accepting a destination (delivery checks again anyway). */
const DNS_CHECK_TIMEOUT_MS = 2000;

/**
 * Refuses a destination URL that points at a private, loopback, link-local or metadata
 * address, by name or by what its name resolves to now. A name that does not resolve
 * yet is accepted: every delivery resolves it again and refuses private addresses then.
 */
export async function assertPublicDestination(url: string): Promise<void> {
  const hostname = new URL(url).hostname.replace(/^\[|\]$/g, '');
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
