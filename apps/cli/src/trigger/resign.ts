/**
 * `hook send --fixture <file> --resign <provider> --secret-file <path>` (docs/cli.md#hook-send):
 * a captured request signed again with a fresh timestamp, for providers that sign one
 * (a verifying endpoint refuses their signatures once older than its tolerance). Only the
 * signature headers change; the body bytes are the fixture's. The signer is the provider's
 * own (packages/core/src/providers/<name>.ts), the one `hook trigger` signs with; Standard
 * Webhooks' is the one the relay signs deliveries with.
 */
import { checkVerificationSecret, PROVIDERS, providerNamed, type ProviderSigner, type VerificationProvider } from '@hook/core';
import { FIXTURE_INVALID, UsageError, UserError } from '../errors.ts';

interface Resigner {
  provider: VerificationProvider;
  title: string;
  signer: ProviderSigner;
}

/** The providers that verify and sign a timestamp, in registry order. */
const RESIGNERS: readonly Resigner[] = PROVIDERS.flatMap((provider) =>
  'verification' in provider && 'signer' in provider && provider.signer.signsTimestamp ? [{ provider: provider.name, title: provider.title, signer: provider.signer }] : []);

/** Providers `--resign` takes: those that sign a timestamp. */
export const RESIGN_PROVIDERS: readonly string[] = RESIGNERS.map((resigner) => resigner.provider);

/** Why a provider cannot be re-signed, in a person's words. */
function whyNot(name: string): { detail: string; fix: string } {
  const provider = providerNamed(name);
  if (provider?.signer !== undefined) {
    return {
      detail: `--resign ${name}: ${provider.title} signs no timestamp, so a captured ${provider.title} request verifies at any age`,
      fix: `Send the fixture without --resign (its signature is for the secret it was sent with); --resign takes ${RESIGN_PROVIDERS.join(', ')}.`,
    };
  }
  if (provider?.verification !== undefined) {
    return {
      detail: `--resign ${name}: ${provider.whyNoSigner ?? `hook send cannot sign as ${provider.title}`}`,
      fix: `Sign the body yourself and pass the headers with -H; --resign takes ${RESIGN_PROVIDERS.join(', ')}.`,
    };
  }
  return { detail: `--resign ${name}: unknown provider`, fix: `--resign takes ${RESIGN_PROVIDERS.join(', ')} (the providers that sign a timestamp).` };
}

/** The provider `--resign` names, checked before anything is read or sent. */
export function resignerFor(provider: string): Resigner {
  const resigner = RESIGNERS.find((candidate) => candidate.provider === provider);
  if (resigner === undefined) {
    const { detail, fix } = whyNot(provider);
    throw new UsageError(detail, fix);
  }
  return resigner;
}

/**
 * The headers that sign `body` again for `provider` at `nowMs`, to set over the fixture's.
 * `captured` is the fixture's headers as they arrived (names lower-cased); `file` names it in errors.
 */
export function resignedHeaders(resigner: Resigner, secret: string, body: Buffer, nowMs: number, captured: Readonly<Record<string, string>>, file: string): Record<string, string> {
  const secretProblem = checkVerificationSecret(resigner.provider, secret);
  if (secretProblem !== null) throw new UsageError(`--secret-file: ${secretProblem}`, `Put the secret the endpoint verifies ${resigner.title} signatures with in the file.`);
  const missing = resigner.signer.headers.filter((name) => !captured[name]);
  if (missing.length > 0) {
    throw new UserError(
      FIXTURE_INVALID,
      `${file} has no ${missing.join(' or ')} header, so it is not a request ${resigner.title} signed`,
      `Re-sign it as the provider that sent it (its headers: ${Object.keys(captured).sort().join(', ') || 'none'}), or export a ${resigner.title} event with \`hook events export <event> --fixture <file>\`.`,
    );
  }
  return resigner.signer.sign(secret, body, Math.floor(nowMs / 1000), captured);
}
