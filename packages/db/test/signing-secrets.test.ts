import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecretKey, generateSigningSecret, newId, SecretBox } from '@hook/core';
import { claimDue, createOrm, EventWriter, openSigningSecret, prepareSigningSecrets, sealSigningSecret, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

let database: TestDatabase;
let orm: Orm;
const key = generateSecretKey();
const accountId = newId('account');

async function sql(text: string, params: unknown[] = []): Promise<any[]> {
  return orm.em.fork().getConnection().execute(text, params);
}

/** An endpoint row written as a relay from before encryption did: plaintext secrets. */
async function insertLegacyEndpoint(secret: string, previousSecret: string | null = null): Promise<string> {
  return (await insertEndpoint(sql, accountId, [{ secret, previousSecret }])).endpointId;
}

beforeAll(async () => {
  database = await freshDatabase();
  orm = await createOrm({ databaseUrl: database.url, secretKey: key });
  await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'free']);
});
afterAll(async () => {
  await orm.close();
  await database.drop();
});

describe('signing secrets at rest', () => {
  it('encrypts plaintext secrets left from before, in batches, once, and reads them back unchanged', async () => {
    const legacy = new Map<string, [string, string | null]>();
    for (let i = 0; i < 5; i++) {
      const pair: [string, string | null] = [generateSigningSecret(), i % 2 === 0 ? generateSigningSecret() : null];
      legacy.set(await insertLegacyEndpoint(...pair), pair);
    }
    const alreadySealed = sealSigningSecret(orm, generateSigningSecret());
    await sql(`update destination set secret = ? where endpoint_id = ?`, [alreadySealed, [...legacy.keys()][0]]);
    legacy.get([...legacy.keys()][0]!)![0] = openSigningSecret(orm, alreadySealed);

    // Batches of 2 over 5 destinations: three statements; the one already sealed keeps its value.
    expect(await prepareSigningSecrets(orm, 2)).toBe(5);
    const plaintext = await sql(`select id from destination where secret like 'whsec_%' or previous_secret like 'whsec_%'`);
    expect(plaintext).toEqual([]);
    const rows = await sql('select endpoint_id as id, secret, previous_secret from destination');
    for (const row of rows) {
      expect(row.secret).toMatch(/^enc:v1:[0-9a-f]{8}:/);
      const [secret, previousSecret] = legacy.get(row.id)!;
      expect(openSigningSecret(orm, row.secret)).toBe(secret);
      expect(row.previous_secret === null ? null : openSigningSecret(orm, row.previous_secret)).toBe(previousSecret);
    }
    expect(rows.find((row) => row.id === [...legacy.keys()][0])!.secret).toBe(alreadySealed);
    expect(await prepareSigningSecrets(orm, 2)).toBe(0); // a second start finds nothing to do
  });

  it('claims deliveries with the secrets decrypted, plaintext rows from before included', async () => {
    const secret = generateSigningSecret();
    const previous = generateSigningSecret();
    const sealedId = await insertLegacyEndpoint(sealSigningSecret(orm, secret), sealSigningSecret(orm, previous));
    const legacyId = await insertLegacyEndpoint('whsec_AAAA');
    const writer = new EventWriter(orm);
    const past = new Date(Date.now() - 1000);
    for (const endpointId of [sealedId, legacyId]) {
      await writer.write({
        id: newId('event'), accountId, endpointId, type: null, method: 'POST', path: '', query: '', headers: {}, body: Buffer.from('{}'),
        contentType: 'application/json', size: 2, receivedAt: past, status: 'pending',
      });
    }
    const claimed = await claimDue(orm, { limit: 10, leaseMs: 30_000, perDestinationLimit: 10 });
    expect(claimed.find((delivery) => delivery.endpointId === sealedId)!.secrets).toEqual([secret, previous]);
    expect(claimed.find((delivery) => delivery.endpointId === legacyId)!.secrets).toEqual(['whsec_AAAA']);
  });

  it('refuses to start with a key that cannot decrypt the stored secrets, rather than sign with garbage', async () => {
    const wrong = await createOrm({ databaseUrl: database.url, secretKey: generateSecretKey(), poolMax: 1 });
    try {
      await expect(prepareSigningSecrets(wrong)).rejects.toThrow(
        new RegExp(`HOOK_SECRET_KEY cannot decrypt the stored endpoint signing secrets \\(a stored secret was encrypted with key ${new SecretBox(key).keyId}`),
      );
    } finally {
      await wrong.close();
    }
  });

  it('cannot store a secret through an ORM created without a key', async () => {
    const keyless = await createOrm({ databaseUrl: database.url, poolMax: 1 });
    try {
      expect(() => sealSigningSecret(keyless, generateSigningSecret())).toThrow(/without a secretKey/);
      expect(openSigningSecret(keyless, 'whsec_AAAA')).toBe('whsec_AAAA');
    } finally {
      await keyless.close();
    }
  });
});

describe('endpoint verification secrets at rest', () => {
  it('are checked at start-up too: a key that cannot open one refuses to start', async () => {
    const endpointId = await insertLegacyEndpoint(sealSigningSecret(orm, generateSigningSecret()));
    const otherKey = generateSecretKey();
    await sql('update endpoint set verification = ?, verification_secret = ? where id = ?', [JSON.stringify({ provider: 'github', mode: 'reject', tolerance_seconds: 300 }), new SecretBox(otherKey).seal('github secret'), endpointId]);
    try {
      await expect(prepareSigningSecrets(orm)).rejects.toThrow(new RegExp(`encrypted with key ${new SecretBox(otherKey).keyId}`));
    } finally {
      await sql('update endpoint set verification = null, verification_secret = null where id = ?', [endpointId]);
    }
  });

  it('handshake secrets (Meta verify token, Zoom and X secrets) are checked at start-up the same way', async () => {
    const endpointId = await insertLegacyEndpoint(sealSigningSecret(orm, generateSigningSecret()));
    const otherKey = generateSecretKey();
    await sql('update endpoint set handshake = ?, handshake_secret = ? where id = ?', [JSON.stringify({ provider: 'meta', secret_hint: 'hock' }), new SecretBox(otherKey).seal('meatyhamhock'), endpointId]);
    try {
      await expect(prepareSigningSecrets(orm)).rejects.toThrow(new RegExp(`encrypted with key ${new SecretBox(otherKey).keyId}`));
    } finally {
      await sql('update endpoint set handshake = null, handshake_secret = null where id = ?', [endpointId]);
    }
  });
});
