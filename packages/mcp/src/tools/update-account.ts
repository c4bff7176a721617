import * as S from '@hook/core/schemas';
import { accountDetailsShape, inputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'update_account',
  title: 'Update account settings',
  description:
    'Change the account\'s settings (PATCH /v1/account; admin keys only). Fields left out stay as they are. ' +
    '`allowed_ips`: IP addresses or CIDRs the API may be called from ([] allows any; pro and enterprise); a list that leaves out ' +
    'the address this call comes from is refused (allowlist_excludes_caller). `custom_domain`: a hostname the user has pointed ' +
    '(CNAME) at the relay, used in endpoint URLs once verified: setting it makes a pending claim whose account.custom_domain_verification ' +
    'is the DNS TXT record the user must add before verify_custom_domain (null clears; pro and enterprise). `retention_days`: days to keep events ' +
    '(null = the plan\'s; enterprise). `email`: contact address (null clears). Returns the account as get_account does.',
  input: inputShapeOf(S.AccountUpdateSchema, {
    allowed_ips: 'e.g. ["203.0.113.0/24", "2001:db8::/32"]; [] clears the allowlist (pro and enterprise)',
    custom_domain: 'e.g. hooks.example.com (no scheme, port or path); null clears it (pro and enterprise)',
    retention_days: '1 to 3650; null goes back to the plan default (enterprise)',
    email: 'A contact address; null clears it',
  }),
  output: accountDetailsShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run(client, changes) {
    const details = await client.account.update(changes);
    const changed = Object.keys(changes).filter((field) => changes[field as keyof typeof changes] !== undefined);
    return {
      result: details,
      summary: changed.length > 0 ? `Account ${details.account.id}: updated ${changed.join(', ')}` : `Account ${details.account.id}: nothing to change`,
    };
  },
});
