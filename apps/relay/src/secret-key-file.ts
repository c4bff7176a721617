/**
 * The embedded default's HOOK_SECRET_KEY: without HOOK_DATABASE_URL and HOOK_SECRET_KEY the
 * relay keeps its key beside the embedded database, in `<dataDir>/secret.key` (base64,
 * mode 0600), generated on first start and reused after. Backing up the data dir backs
 * up the key with the secrets it opens.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateSecretKey, parseSecretKey } from '@hook/core';

/** The key file's name inside the data dir. */
export const SECRET_KEY_FILE = 'secret.key';

/** The key in `<dataDir>/secret.key`, made (owner read/write only) when there is none. */
export async function loadOrCreateSecretKey(dataDir: string): Promise<{ key: Buffer; path: string; created: boolean }> {
  const path = join(dataDir, SECRET_KEY_FILE);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== undefined) {
    try {
      return { key: parseSecretKey(text), path, created: false };
    } catch (error) {
      throw new Error(`${path} does not hold a secret key (${(error as Error).message}). Restore it from a backup; if it is lost, every endpoint secret must be replaced.`);
    }
  }
  await mkdir(dataDir, { recursive: true });
  const key = generateSecretKey();
  // 'wx': two relays starting at once on one data dir cannot both write a key; the loser reads the winner's.
  try {
    await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSecretKey(dataDir);
    throw error;
  }
  await chmod(path, 0o600); // the mode above is narrowed further by umask, never widened; make it exact
  return { key, path, created: true };
}
