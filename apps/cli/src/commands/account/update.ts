import { InvalidArgumentError, Option } from 'commander';
import type { AccountUpdate } from '@hook/client';
import { CUSTOM_RETENTION_DAYS } from '@hook/core';
import { defineCommand } from '../../command.ts';
import { UsageError } from '../../errors.ts';
import { accountView } from '../../views.ts';

interface UpdateOptions {
  allowedIp?: string[];
  clearAllowedIps?: boolean;
  customDomain?: string;
  clearCustomDomain?: boolean;
  retentionDays?: number;
  clearRetentionDays?: boolean;
}

function collectAllowedIp(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function parseRetentionDays(value: string): number {
  const days = Number(value);
  if (!/^\d+$/.test(value) || days < CUSTOM_RETENTION_DAYS.min || days > CUSTOM_RETENTION_DAYS.max) {
    throw new InvalidArgumentError(`must be a whole number of days from ${CUSTOM_RETENTION_DAYS.min} to ${CUSTOM_RETENTION_DAYS.max}.`);
  }
  return days;
}

export default defineCommand<[], UpdateOptions>({
  path: ['account', 'update'],
  summary: 'Change the account settings: IP allowlist, custom domain, retention',
  description:
    'Change the account settings (PATCH /v1/account; admin keys only). What is not given stays as it is.\n' +
    '--allowed-ip replaces the whole allowlist with the addresses given (pro and enterprise); the relay refuses a list that leaves out the address you call from.\n' +
    '--custom-domain claims your own hostname for endpoint URLs (pro and enterprise): point it (CNAME) at the relay and terminate TLS for it first. ' +
    'The claim is pending, and changes nothing, until you add the DNS TXT record it shows and run `hook account verify-domain`.\n' +
    '--retention-days sets how long events are kept (enterprise).',
  examples: [
    ['hook account update --allowed-ip 203.0.113.0/24 --allowed-ip 2001:db8::/32', 'only these networks may call the API'],
    ['hook account update --clear-allowed-ips', 'any address may call the API again'],
    ['hook account update --custom-domain hooks.example.com', 'claim your own domain for endpoint URLs; shows the DNS record to add'],
    ['hook account update --retention-days 730 --json', 'keep events two years (enterprise); print the account as JSON'],
  ],
  configure(command) {
    command
      .addOption(new Option('--allowed-ip <cidr>', 'an IP address or CIDR (IPv4 or IPv6) API calls may come from; repeat for several; replaces the list').argParser(collectAllowedIp).conflicts('clearAllowedIps'))
      .addOption(new Option('--clear-allowed-ips', 'empty the allowlist: any address may call the API'))
      .addOption(new Option('--custom-domain <host>', 'a hostname you control for endpoint URLs, e.g. hooks.example.com').conflicts('clearCustomDomain'))
      .addOption(new Option('--clear-custom-domain', "endpoint URLs go back to the relay's host"))
      .addOption(new Option('--retention-days <n>', `days to keep events, ${CUSTOM_RETENTION_DAYS.min}–${CUSTOM_RETENTION_DAYS.max} (enterprise)`).argParser(parseRetentionDays).conflicts('clearRetentionDays'))
      .addOption(new Option('--clear-retention-days', "go back to the plan's retention"));
  },
  async run(context, _args, options) {
    const changes: AccountUpdate = {};
    if (options.allowedIp !== undefined) changes.allowed_ips = options.allowedIp;
    if (options.clearAllowedIps) changes.allowed_ips = [];
    if (options.customDomain !== undefined) changes.custom_domain = options.customDomain;
    if (options.clearCustomDomain) changes.custom_domain = null;
    if (options.retentionDays !== undefined) changes.retention_days = options.retentionDays;
    if (options.clearRetentionDays) changes.retention_days = null;
    if (Object.keys(changes).length === 0) {
      throw new UsageError('Nothing to change', 'Pass --allowed-ip <cidr> (repeatable), --clear-allowed-ips, --custom-domain <host>, --clear-custom-domain, --retention-days <n> or --clear-retention-days.');
    }
    const client = await context.client();
    const details = await client.account.update(changes);
    await context.out.result(details, accountView(details));
  },
});
