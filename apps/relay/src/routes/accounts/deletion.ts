/**
 * `DELETE /v1/account?confirm=<account id>`: erases the account and everything kept for it
 * (packages/db account-erasure.ts), admins only. The confirmation is the account's own id,
 * so a request meant for another account (a script holding the wrong key) cannot erase
 * this one.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CONFIRMATION_REQUIRED, HookError } from '@hook/core';
import { eraseAccount } from '@hook/db';
import { requireAdmin } from '../../plugins/auth.ts';
import { AccountDeletedSchema, errorResponses } from '../../schemas.ts';
import type { CustomDomainCache } from '../ingest/custom-domains.ts';
import type { IngestTargetCache } from '../ingest/target-cache.ts';

/**
 * Least time between closing the account's endpoints and deleting its row: twice the
 * longest any relay process trusts a cached ingest target (target-cache.ts, 1 s), so no
 * process still stores events for the account when it goes.
 */
const INGEST_CACHE_SETTLE_MS = 2000;

const security = [{ bearerAuth: [] }];

export interface AccountDeletionOptions {
  targets: IngestTargetCache;
  domains: CustomDomainCache;
  /** How long a delivery claim holds (leaseMsFor): the longest the erasure waits for deliveries in flight. */
  leaseMs: number;
}

export async function accountDeletionRoutes(app: FastifyInstance, options: AccountDeletionOptions): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().delete('/v1/account', {
    schema: {
      tags: ['accounts'],
      summary: 'Erase the account and everything in it for good (admins only; confirm with the account id)',
      description:
        'Erases the account with its endpoints, destinations, events, deliveries, attempts, API keys, members, console sessions, usage, ' +
        'plan history and notifications. Ingest URLs answer 404 from now on and every key stops working. Deliveries in flight are let ' +
        'finish first (at most one delivery lease), so the request may take a few seconds. Nothing can be restored.',
      security,
      querystring: Type.Object({
        confirm: Type.Optional(Type.String({ maxLength: 200, description: "The account's own id (acct_…), to confirm" })),
      }, { additionalProperties: false }),
      response: { 200: AccountDeletedSchema, ...errorResponses },
    },
  }, async (request) => {
    requireAdmin(request, 'delete the account');
    const accountId = request.accountId;
    const { confirm } = request.query;
    if (confirm !== accountId) {
      const problem = confirm === undefined || confirm === '' ? 'confirm is missing' : `confirm is '${confirm}', not this account's id`;
      throw new HookError(CONFIRMATION_REQUIRED, [accountId, `${problem}; send ?confirm=${accountId}`], [{ field: 'query.confirm', message: `must be ${accountId}` }]);
    }
    const erased = await eraseAccount(app.orm, accountId, {
      settleMs: INGEST_CACHE_SETTLE_MS,
      inFlightWaitMs: options.leaseMs,
      onEndpointsClosed: ({ ingestIds, customDomain }) => {
        for (const ingestId of ingestIds) options.targets.invalidate(ingestId);
        if (customDomain) options.domains.invalidate(customDomain);
      },
    });
    // Null only when a concurrent request erased it first: the account is gone either way.
    const counts = erased ?? { endpoints: 0, destinations: 0, events: 0, apiKeys: 0, members: 0 };
    request.log.info({ account_id: accountId, erased: counts }, 'account erased');
    return {
      id: accountId,
      deleted: true as const,
      erased: { endpoints: counts.endpoints, destinations: counts.destinations, events: counts.events, api_keys: counts.apiKeys, members: counts.members },
    };
  });
}
