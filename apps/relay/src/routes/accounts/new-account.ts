import type { EntityManager } from '@mikro-orm/core';
import { apiKeyPrefix, DEFAULT_PLAN, generateApiKey, hashApiKey, newId } from '@hook/core';
import { Account, ApiKey, Member, type AccountEntity, type ApiKeyEntity, type MemberEntity } from '@hook/db';

/** A new account on the default plan with its first member, an admin (persisted at the next flush). */
export function createAccount(em: EntityManager, { email, now }: { email: string | null; now: Date }): { account: AccountEntity; admin: MemberEntity } {
  const account = em.create(Account, { id: newId('account'), plan: DEFAULT_PLAN, email, createdAt: now });
  const admin = em.create(Member, { id: newId('member'), accountId: account.id, email, role: 'admin', createdAt: now });
  return { account, admin };
}

/** A new API key of a member (persisted at the next flush); `secret` is the `hk_…` value, shown once. */
export function createApiKey(
  em: EntityManager,
  { accountId, memberId, name, now }: { accountId: string; memberId: string; name: string | null; now: Date },
): { key: ApiKeyEntity; secret: string } {
  const secret = generateApiKey();
  const key = em.create(ApiKey, { id: newId('apiKey'), accountId, memberId, name, prefix: apiKeyPrefix(secret), keyHash: hashApiKey(secret), createdAt: now });
  return { key, secret };
}
