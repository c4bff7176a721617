/** A handshake from flags (docs/sources.md, Handshakes): shared by `hook endpoints create` and `hook endpoints update`. */
import { Option, type Command } from 'commander';
import { HANDSHAKE_PROVIDERS, HANDSHAKE_SECRET_PROVIDERS } from '@hook/core';
import type { EndpointHandshake, EndpointHandshakeInput, HandshakeProvider } from '@hook/client';
import { readOptionFile } from './endpoint-rules.ts';
import { UsageError } from './errors.ts';

export interface HandshakeFlags {
  /** A provider; false from `--no-handshake`. */
  handshake?: HandshakeProvider | false;
  handshakeSecretFile?: string;
}

/** Adds the --handshake flags; `clearable` adds --no-handshake (update). */
export function addHandshakeOptions(command: Command, clearable: boolean): Command {
  command
    .addOption(new Option('--handshake <provider>', 'answer this provider\'s handshake at the ingest URL (docs/sources.md)').choices(HANDSHAKE_PROVIDERS))
    .option('--handshake-secret-file <path>', 'meta: the verify token; zoom: the secret token; twitter: the consumer secret, read from this file');
  if (clearable) command.option('--no-handshake', 'stop answering handshakes (the secret is forgotten)');
  return command;
}

/** The `handshake` field the flags give (null clears it), or undefined when none was given. */
export async function handshakeFromFlags(flags: HandshakeFlags): Promise<EndpointHandshakeInput | null | undefined> {
  if (flags.handshake === false) {
    if (flags.handshakeSecretFile !== undefined) throw new UsageError('--no-handshake takes no --handshake-secret-file', 'Either turn the handshake off with --no-handshake, or set it with --handshake <provider>.');
    return null;
  }
  if (flags.handshake === undefined) {
    if (flags.handshakeSecretFile !== undefined) throw new UsageError('--handshake-secret-file needs --handshake <provider>', `Add --handshake ${HANDSHAKE_SECRET_PROVIDERS.join('|')} (docs/sources.md).`);
    return undefined;
  }
  const needsSecret = HANDSHAKE_SECRET_PROVIDERS.includes(flags.handshake);
  if (needsSecret && flags.handshakeSecretFile === undefined) {
    throw new UsageError(`--handshake ${flags.handshake} needs --handshake-secret-file <path>`, 'Put the verify token or secret in a file (not on the command line, where it would stay in your shell history) and pass its path.');
  }
  if (!needsSecret && flags.handshakeSecretFile !== undefined) {
    throw new UsageError(`--handshake ${flags.handshake} takes no --handshake-secret-file`, `Only ${HANDSHAKE_SECRET_PROVIDERS.join(', ')} need a secret; leave the flag out.`);
  }
  if (flags.handshakeSecretFile === undefined) return { provider: flags.handshake };
  const secret = (await readOptionFile(flags.handshakeSecretFile, '--handshake-secret-file')).replace(/\r?\n$/, '');
  if (secret.length === 0) throw new UsageError(`--handshake-secret-file ${flags.handshakeSecretFile} is empty`, 'Write the verify token or secret into the file.');
  return { provider: flags.handshake, secret };
}

/** How an endpoint's handshake reads in `hook endpoints get`. */
export function handshakeText(handshake: EndpointHandshake | null): string {
  if (!handshake) return 'none';
  return handshake.secret_hint === null ? handshake.provider : `${handshake.provider}, secret …${handshake.secret_hint}`;
}
