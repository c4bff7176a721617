import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateSecretKey } from '../src/secret-key-file.ts';

const root = mkdtempSync(join(tmpdir(), 'hook-secret-key-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the embedded default secret key', () => {
  it('is generated into <dataDir>/secret.key on first start, readable by its owner only, and reused after', async () => {
    const dataDir = join(root, 'fresh', '.hook'); // not there yet: made on first start
    const first = await loadOrCreateSecretKey(dataDir);
    expect(first.created).toBe(true);
    expect(first.key).toHaveLength(32);
    expect(first.path).toBe(join(dataDir, 'secret.key'));
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(first.path, 'utf8').trim(), 'base64')).toEqual(first.key);

    const again = await loadOrCreateSecretKey(dataDir);
    expect(again.created).toBe(false);
    expect(again.key).toEqual(first.key);
  });

  it('is made once when two relays start together on one data dir', async () => {
    const dataDir = join(root, 'race');
    const [a, b] = await Promise.all([loadOrCreateSecretKey(dataDir), loadOrCreateSecretKey(dataDir)]);
    expect(a.key).toEqual(b.key);
  });

  it('refuses a key file that holds no key, rather than replace it', async () => {
    const dataDir = join(root, 'damaged');
    await loadOrCreateSecretKey(dataDir);
    writeFileSync(join(dataDir, 'secret.key'), 'not a key\n');
    await expect(loadOrCreateSecretKey(dataDir)).rejects.toThrow(/secret\.key does not hold a secret key .*Restore it from a backup/);
    expect(readFileSync(join(dataDir, 'secret.key'), 'utf8')).toBe('not a key\n');
  });
});
