/**
 * Destination signing secrets are stored sealed (AES-256-GCM, packages/core secret-box.ts)
 * under the key the ORM was created with (CreateOrmOptions.secretKey). The ORM carries its
 * SecretBox as a MikroORM extension, so every EntityManager fork and raw query mapping
 * reaches the same key without a module-level singleton.
 */
import { sql } from 'kysely';
import type { Configuration } from '@mikro-orm/core';
import { isSealedSecret, SecretBox, SecretBoxError } from '@hook/core';
import type { Orm } from './orm.ts';

const EXTENSION = '@hook/signing-secret-box';

/** Anything that carries the ORM's configuration: the ORM itself or an EntityManager (fork). */
export type SecretBoxOwner = { readonly config: Configuration };

/** Gives the ORM its key; createOrm calls it. */
export function attachSecretBox(orm: Orm, key: Buffer): void {
  const box = new SecretBox(key);
  orm.config.registerExtension(EXTENSION, () => box);
}

/** The ORM's SecretBox; throws when the ORM was created without a secret key (a bug in the caller: the relay always passes one). */
export function signingSecretBox(owner: SecretBoxOwner): SecretBox {
  const box = owner.config.getExtension<SecretBox>(EXTENSION);
  if (!box) throw new SecretBoxError('this ORM was created without a secretKey, so it cannot store or read encrypted signing secrets (createOrm({ secretKey }))');
  return box;
}

/** The stored form of a new signing secret. */
export function sealSigningSecret(owner: SecretBoxOwner, plaintext: string): string {
  return signingSecretBox(owner).seal(plaintext);
}

/** The plaintext of a stored signing secret (a legacy plaintext value as it is). */
export function openSigningSecret(owner: SecretBoxOwner, stored: string): string {
  return isSealedSecret(stored) ? signingSecretBox(owner).open(stored) : stored;
}

/** The secrets that sign a delivery, opened: the current one and, during a rotation's grace period, the previous one. */
export function openSigningSecrets(owner: SecretBoxOwner, secret: string, previousSecret: string | null): string[] {
  return previousSecret ? [openSigningSecret(owner, secret), openSigningSecret(owner, previousSecret)] : [openSigningSecret(owner, secret)];
}

/** Destinations sealed per statement by prepareSigningSecrets. */
export const SEAL_BATCH_SIZE = 500;

/**
 * Start-up step, after migrations: checks that the key opens the stored secrets, then
 * seals any secret still stored in plaintext (rows from before encryption).
 *
 * The check opens one sealed secret of each key id found (destination signing secrets,
 * endpoint verification and handshake secrets, alert channels' Slack URLs): with the wrong HOOK_SECRET_KEY the relay must refuse to
 * start rather than sign deliveries with garbage or fail every verifying ingest. The
 * sealing is one keyset pass over the table in batches; each row is updated only if it still holds
 * the value read, so relays starting together (or a rotation meanwhile) never overwrite
 * each other. Returns how many destinations were sealed.
 */
export async function prepareSigningSecrets(orm: Orm, batchSize = SEAL_BATCH_SIZE): Promise<number> {
  const box = signingSecretBox(orm);
  const db = orm.em.getKysely();
  const { rows: samples } = await sql<{ secret: string }>`
    select distinct on (split_part(secret, ':', 3)) secret
    from (select secret, id from destination where secret like 'enc:%'
          union all select verification_secret, id from endpoint where verification_secret like 'enc:%'
          union all select handshake_secret, id from endpoint where handshake_secret like 'enc:%'
          union all select slack_url, account_id from alert_channel where slack_url like 'enc:%') as sealed
    order by split_part(secret, ':', 3), id`.execute(db);
  for (const { secret } of samples) {
    try {
      box.open(secret);
    } catch (error) {
      throw new SecretBoxError(`HOOK_SECRET_KEY cannot decrypt the stored endpoint signing secrets (${(error as Error).message}). ` +
        'Start the relay with the HOOK_SECRET_KEY it used before; if that key is lost, every endpoint secret must be replaced (docs/deployment.md, Secrets).');
    }
  }

  let sealed = 0;
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string; secret: string; previous_secret: string | null }>`
      select id, secret, previous_secret from destination
      where id > ${after} and (secret not like 'enc:%' or previous_secret not like 'enc:%')
      order by id limit ${batchSize}`.execute(db);
    if (rows.length === 0) return sealed;
    after = rows[rows.length - 1]!.id;
    const seal = (value: string | null) => (value === null || isSealedSecret(value) ? value : box.seal(value));
    const { rows: updated } = await sql<{ id: string }>`
      update destination e set secret = v.secret, previous_secret = v.previous_secret
      from unnest(${rows.map((row) => row.id)}::text[], ${rows.map((row) => row.secret)}::text[], ${rows.map((row) => row.previous_secret)}::text[],
                  ${rows.map((row) => seal(row.secret))}::text[], ${rows.map((row) => seal(row.previous_secret))}::text[])
        as v(id, old_secret, old_previous_secret, secret, previous_secret)
      where e.id = v.id and e.secret = v.old_secret and e.previous_secret is not distinct from v.old_previous_secret
      returning e.id`.execute(db);
    sealed += updated.length;
  }
}
