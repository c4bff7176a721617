import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { HookError, LAST_ADMIN, MEMBER_EXISTS, MEMBER_NOT_FOUND, newId, PLAN_LIMIT_REACHED, PLAN_LIMITS } from '@hook/core';
import { Account, Member, type MemberRole } from '@hook/db';
import { createApiKey } from '../accounts/new-account.ts';
import { requireAdmin } from '../../plugins/auth.ts';
import { CreatedMemberSchema, errorResponses, IdParams, MemberCreateSchema, MemberSchema, MemberUpdateSchema, Page, PageQuery } from '../../schemas.ts';
import { afterCursor, fetchSize, toPage } from '../pagination.ts';

type MemberRow = { id: string; email?: string | null; role: MemberRole; createdAt: Date };

export function presentMember(member: MemberRow) {
  return { id: member.id, email: member.email ?? null, role: member.role, created_at: member.createdAt.toISOString() };
}

const security = [{ bearerAuth: [] }];

/**
 * Locks the account's row for the rest of the transaction. Every change to who is on the
 * team (adding, removing, changing a role, revoking a key) takes this lock first, so
 * concurrent changes take turns: two adds at the plan's limit cannot both pass the count,
 * and two removals cannot take away the last two admins together.
 */
export async function lockAccount(em: EntityManager, accountId: string) {
  return em.findOneOrFail(Account, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/**
 * Admins other than `exceptMemberId` that hold at least one API key: those who could still
 * manage the account if that member were removed or made a member. (An admin without keys
 * cannot act, and nobody can mint a key for them.)
 */
export async function otherAdminsWithKeys(em: EntityManager, accountId: string, exceptMemberId: string): Promise<number> {
  const rows = await em.execute<{ n: number }[]>(
    `select count(distinct m.id)::int as n from member m join api_key k on k.member_id = m.id
     where m.account_id = ? and m.role = 'admin' and m.id <> ?`,
    [accountId, exceptMemberId],
  );
  return rows[0]?.n ?? 0;
}

async function findMember(em: EntityManager, accountId: string, id: string) {
  const member = await em.findOne(Member, { id, accountId });
  if (!member) throw new HookError(MEMBER_NOT_FOUND, [id]);
  return member;
}

/** `/v1/members`: the account's team. Anyone on it may look; only admins change it. */
export async function memberRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post('/v1/members', {
    schema: {
      tags: ['members'],
      summary: "Add a member (admins only) and create the member's first API key (shown once)",
      security,
      body: MemberCreateSchema,
      response: { 201: CreatedMemberSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    requireAdmin(request, 'add members');
    const { email, role = 'member' } = request.body;
    const now = new Date();
    const created = await request.em.transactional(async (em) => {
      const account = await lockAccount(em, request.accountId);
      const allowed = PLAN_LIMITS[account.plan].members;
      const count = await em.count(Member, { accountId: account.id });
      if (allowed !== null && count >= allowed) {
        throw new HookError(PLAN_LIMIT_REACHED, [
          `The ${account.plan} plan allows ${allowed} members (the first admin included) and this account has ${count}; remove a member or upgrade to add more`,
        ]);
      }
      const taken = await em.execute<{ id: string }[]>(
        'select id from member where account_id = ? and lower(email) = lower(?)',
        [account.id, email],
      );
      if (taken.length > 0) throw new HookError(MEMBER_EXISTS, [email]);
      const member = em.create(Member, { id: newId('member'), accountId: account.id, email, role, createdAt: now });
      const { secret } = createApiKey(em, { accountId: account.id, memberId: member.id, name: 'default', now });
      return { member, secret };
    });
    return reply.code(201).send({ member: presentMember(created.member), api_key: created.secret });
  });

  api.get('/v1/members', {
    schema: {
      tags: ['members'],
      summary: 'List the members of the account, newest first',
      security,
      querystring: Type.Object(PageQuery, { additionalProperties: false }),
      response: { 200: Page(MemberSchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit, cursor } = request.query;
    const rows = await request.em.find(
      Member,
      { accountId: request.accountId, ...afterCursor(cursor) },
      { orderBy: { id: 'desc' }, limit: fetchSize(limit) },
    );
    return toPage(rows, limit, presentMember);
  });

  api.get('/v1/members/:id', {
    schema: {
      tags: ['members'],
      summary: 'One member of the account',
      security,
      params: IdParams('member', 'Member id'),
      response: { 200: MemberSchema, ...errorResponses },
    },
  }, async (request) => presentMember(await findMember(request.em, request.accountId, request.params.id)));

  api.patch('/v1/members/:id', {
    schema: {
      tags: ['members'],
      summary: "Change a member's role (admins only); the account keeps at least one admin",
      security,
      params: IdParams('member', 'Member id'),
      body: MemberUpdateSchema,
      response: { 200: MemberSchema, ...errorResponses },
    },
  }, async (request) => {
    requireAdmin(request, "change members' roles");
    const { id } = request.params;
    const { role } = request.body;
    const member = await request.em.transactional(async (em) => {
      await lockAccount(em, request.accountId);
      const found = await findMember(em, request.accountId, id);
      if (found.role === 'admin' && role !== 'admin' && (await otherAdminsWithKeys(em, request.accountId, id)) === 0) {
        throw new HookError(LAST_ADMIN, [id]);
      }
      found.role = role;
      return found;
    });
    return presentMember(member);
  });

  api.delete('/v1/members/:id', {
    schema: {
      tags: ['members'],
      summary: 'Remove a member (admins only); its API keys stop working at once',
      security,
      params: IdParams('member', 'Member id'),
      response: { 204: Type.Null(), ...errorResponses },
    },
  }, async (request, reply) => {
    requireAdmin(request, 'remove members');
    const { id } = request.params;
    await request.em.transactional(async (em) => {
      await lockAccount(em, request.accountId);
      const found = await findMember(em, request.accountId, id);
      if (found.role === 'admin' && (await otherAdminsWithKeys(em, request.accountId, id)) === 0) throw new HookError(LAST_ADMIN, [id]);
      // api_key.member_id cascades: the member's keys go with it.
      await em.nativeDelete(Member, { id, accountId: request.accountId });
    });
    return reply.code(204).send(null);
  });
}
