/** Signature verification from flags (docs/sources.md): shared by `hook endpoints create` and `hook endpoints update`. */
import { Option, type Command } from 'commander';
import { HMAC_ALGORITHMS, HMAC_ENCODINGS, VERIFICATION_MODES, VERIFICATION_PROVIDERS } from '@hook/core';
import type { EndpointVerificationInput, HmacAlgorithm, HmacEncoding, VerificationMode, VerificationProvider } from '@hook/client';
import { readOptionFile } from './endpoint-rules.ts';
import { UsageError } from './errors.ts';
import { parsePositiveWholeNumber } from './option-parsers.ts';

export interface VerificationFlags {
  /** A provider; false from `--no-verify`. */
  verify?: VerificationProvider | false;
  verifySecretFile?: string;
  verifyMode?: VerificationMode;
  verifyTolerance?: number;
  verifyHeader?: string;
  verifyAlgorithm?: HmacAlgorithm;
  verifyEncoding?: HmacEncoding;
  verifyPrefix?: string;
  verifyTimestampHeader?: string;
}

const HMAC_FLAGS = [
  ['verifyHeader', '--verify-header'], ['verifyAlgorithm', '--verify-algorithm'], ['verifyEncoding', '--verify-encoding'],
  ['verifyPrefix', '--verify-prefix'], ['verifyTimestampHeader', '--verify-timestamp-header'],
] as const;

/** Adds the --verify flags; `clearable` adds --no-verify (update). */
export function addVerificationOptions(command: Command, clearable: boolean): Command {
  command
    .addOption(new Option('--verify <provider>', 'check each request\'s signature at the ingest URL (docs/sources.md)').choices(VERIFICATION_PROVIDERS))
    .option('--verify-secret-file <path>', 'the secret the sender signs with, read from this file (with --verify)')
    .addOption(new Option('--verify-mode <mode>', 'reject: answer 401 and store nothing; flag: store and deliver, marked unverified (default reject)').choices(VERIFICATION_MODES))
    .option('--verify-tolerance <seconds>', 'how far a signed timestamp may be from the relay\'s clock (default 300)', parsePositiveWholeNumber)
    .option('--verify-header <name>', 'hmac: the header carrying the signature')
    .addOption(new Option('--verify-algorithm <hash>', 'hmac: the hash (default sha256)').choices(HMAC_ALGORITHMS))
    .addOption(new Option('--verify-encoding <encoding>', 'hmac: how the signature is written (default hex)').choices(HMAC_ENCODINGS))
    .option('--verify-prefix <text>', 'hmac: text before the signature, e.g. sha256=')
    .option('--verify-timestamp-header <name>', 'hmac: the header carrying a Unix timestamp; the signed text is then "<timestamp>.<body>"');
  if (clearable) command.option('--no-verify', 'stop checking signatures (the secret is forgotten)');
  return command;
}

/** The `verification` field the flags give (null clears it), or undefined when no --verify flag was given. */
export async function verificationFromFlags(flags: VerificationFlags): Promise<EndpointVerificationInput | null | undefined> {
  const others = Object.entries(flags).filter(([name, value]) => name.startsWith('verify') && name !== 'verify' && value !== undefined);
  if (flags.verify === false) {
    if (others.length > 0) throw new UsageError('--no-verify takes no other --verify-… flag', 'Either turn verification off with --no-verify, or set it with --verify <provider> --verify-secret-file <path>.');
    return null;
  }
  if (flags.verify === undefined) {
    if (others.length > 0) throw new UsageError('--verify-… flags need --verify <provider>', `Add --verify ${VERIFICATION_PROVIDERS.join('|')} (docs/sources.md).`);
    return undefined;
  }
  if (flags.verifySecretFile === undefined) {
    throw new UsageError(`--verify ${flags.verify} needs --verify-secret-file <path>`, 'Put the secret the sender signs with in a file (not on the command line, where it would stay in your shell history) and pass its path.');
  }
  const secret = (await readOptionFile(flags.verifySecretFile, '--verify-secret-file')).replace(/\r?\n$/, '');
  if (secret.length === 0) throw new UsageError(`--verify-secret-file ${flags.verifySecretFile} is empty`, 'Write the secret the sender signs with into the file.');
  const hmacFlags = HMAC_FLAGS.filter(([name]) => flags[name] !== undefined);
  if (flags.verify !== 'hmac' && hmacFlags.length > 0) {
    throw new UsageError(`${hmacFlags.map(([, flag]) => flag).join(', ')} only go with --verify hmac`, `--verify ${flags.verify} follows ${flags.verify}'s published scheme; leave those flags out.`);
  }
  if (flags.verify === 'hmac' && flags.verifyHeader === undefined) {
    throw new UsageError('--verify hmac needs --verify-header <name>', 'Name the header the sender puts its signature in, e.g. --verify-header X-Signature.');
  }
  return {
    provider: flags.verify,
    secret,
    ...(flags.verifyMode !== undefined ? { mode: flags.verifyMode } : {}),
    ...(flags.verifyTolerance !== undefined ? { tolerance_seconds: flags.verifyTolerance } : {}),
    ...(flags.verifyHeader !== undefined ? { header: flags.verifyHeader } : {}),
    ...(flags.verifyAlgorithm !== undefined ? { algorithm: flags.verifyAlgorithm } : {}),
    ...(flags.verifyEncoding !== undefined ? { encoding: flags.verifyEncoding } : {}),
    ...(flags.verifyPrefix !== undefined ? { prefix: flags.verifyPrefix } : {}),
    ...(flags.verifyTimestampHeader !== undefined ? { signed: 'timestamp.body' as const, timestamp_header: flags.verifyTimestampHeader } : {}),
  };
}

/** How an endpoint's verification reads in `hook endpoints get`. */
export function verificationText(verification: { provider: string; mode: string; tolerance_seconds: number; secret_hint: string; header?: string } | null): string {
  if (!verification) return 'none';
  const where = verification.provider === 'hmac' ? ` (${verification.header})` : '';
  return `${verification.provider}${where}, ${verification.mode}, secret …${verification.secret_hint}`;
}
