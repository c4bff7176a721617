/**
 * The words of every alert, for each channel, in one place (docs/alerts.md shows them):
 * Slack gets `text` (the notification line and the fallback) and Block Kit `blocks`;
 * email a subject and plain text. Both say the same things in the same order: what
 * happened, to what, the details, where to look, and what the hourly limit held back.
 */
import type { AlertMessageType, AlertsHeldBack } from '@hook/core';
import { ALERT_CHANNEL_LIMIT_PER_HOUR } from '@hook/core';

/** What a message is made from: the alert row and the names its ids stand for now. */
export interface AlertMessageInput {
  type: AlertMessageType;
  accountId: string;
  data: Record<string, unknown>;
  /** When its cause happened (ISO 8601, UTC). */
  createdAt: string;
  heldBack: AlertsHeldBack | null;
  /** The endpoint's name, when the alert names an endpoint that still exists. */
  endpointName: string | null;
  /** The destination's URL (or broker address), when the alert names one that still exists. */
  destinationTarget: string | null;
  /** HOOK_PUBLIC_URL, for links into the console; without it messages carry no links. */
  publicUrl: string | undefined;
}

/** One alert in words, before each channel's formatting. */
interface AlertWords {
  /** One line: what happened, to what. */
  headline: string;
  /** Label and value lines. */
  details: [string, string][];
  /** Where to look, with its label. */
  link: { label: string; url: string } | null;
  /** What the hourly limit held back before this one. */
  heldBack: string | null;
}

export interface SlackMessage {
  text: string;
  blocks: unknown[];
}

export interface EmailMessage {
  subject: string;
  text: string;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null);

function disabledBecause(reason: unknown, failures: unknown): string {
  if (reason === 'gone_410') return 'its receiver answered 410 Gone';
  const count = text(failures);
  return count === null ? 'it kept failing' : `it failed ${count} attempts in a row for a day`;
}

function endpointLabel(input: AlertMessageInput): string {
  const id = text(input.data.endpoint_id) ?? 'an endpoint';
  return input.endpointName ? `${input.endpointName} (${id})` : id;
}

function destinationLabel(input: AlertMessageInput): string {
  const id = text(input.data.destination_id) ?? 'a destination';
  return input.destinationTarget ? `${input.destinationTarget} (${id})` : id;
}

function consoleLink(input: AlertMessageInput, fragment: string, label: string): AlertWords['link'] {
  return input.publicUrl ? { label, url: `${input.publicUrl}/console#/${fragment}` } : null;
}

/** The words of an alert, whatever the channel. */
export function alertWords(input: AlertMessageInput): AlertWords {
  const { data } = input;
  const heldBack = input.heldBack
    ? `…and ${input.heldBack.count} more alert${input.heldBack.count === 1 ? '' : 's'} since ${input.heldBack.since}, held back by the limit of ${ALERT_CHANNEL_LIMIT_PER_HOUR} alerts per hour on this channel.`
    : null;
  const when: [string, string] = ['When', input.createdAt];
  switch (input.type) {
    case 'issue.opened':
    case 'issue.reopened': {
      const title = text(data.title) ?? text(data.kind) ?? 'Deliveries failing';
      const details: [string, string][] = [['Destination', destinationLabel(input)], ['Endpoint', endpointLabel(input)]];
      const status = text(data.last_status);
      const error = text(data.last_error);
      if (status) details.push(['Last status', status]);
      if (error) details.push(['Last error', error]);
      if (text(data.failure_count)) details.push(['Failures', text(data.failure_count)!]);
      if (text(data.event_id)) details.push(['Latest failed event', text(data.event_id)!]);
      details.push(when);
      const issueId = text(data.issue_id);
      // named even without a console link (no HOOK_PUBLIC_URL): what to run to triage it
      if (issueId) details.push(['Issue', `${issueId}: hook issues get ${issueId}, then hook issues retry ${issueId} once the receiver is fixed`]);
      return {
        headline: `${input.type === 'issue.opened' ? 'Issue opened' : 'Issue reopened'}: ${title}`,
        details,
        link: issueId ? consoleLink(input, `issues/${issueId}`, 'See the issue') : null,
        heldBack,
      };
    }
    case 'destination.disabled':
      return {
        headline: `Destination disabled: ${destinationLabel(input)} gets no more deliveries because ${disabledBecause(data.reason, data.consecutive_failures)}`,
        details: [['Endpoint', endpointLabel(input)], ['What to do', `Fix the receiver, then resume the destination (hook destinations update ${text(data.destination_id) ?? '<id>'} --status active); its events wait meanwhile`], when],
        link: text(data.endpoint_id) ? consoleLink(input, `endpoints/${text(data.endpoint_id)}`, 'See the endpoint') : null,
        heldBack,
      };
    case 'endpoint.disabled':
      return {
        headline: `Endpoint disabled: ${endpointLabel(input)} refuses new events because its last destination was disabled (${disabledBecause(data.reason, null)})`,
        details: [['What to do', `Fix the receiver, then re-enable the endpoint (hook endpoints update ${text(data.endpoint_id) ?? '<endpoint>'} --resume)`], when],
        link: text(data.endpoint_id) ? consoleLink(input, `endpoints/${text(data.endpoint_id)}`, 'See the endpoint') : null,
        heldBack,
      };
    case 'test':
      return {
        headline: `Test alert from Hook: alerts of account ${input.accountId} reach this channel`,
        details: [['Sent for', text(data.requested_by) ?? 'an admin'], when],
        link: consoleLink(input, 'account/alerts', 'Alert settings'),
        heldBack: null,
      };
  }
}

/** Slack's mrkdwn: `&`, `<` and `>` are its control characters. */
function escapeSlack(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The alert for a Slack incoming webhook (Block Kit, with `text` as the notification and fallback). */
export function slackMessage(input: AlertMessageInput): SlackMessage {
  const words = alertWords(input);
  const lines = words.details.map(([label, value]) => `*${escapeSlack(label)}:* ${escapeSlack(value)}`);
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${escapeSlack(words.headline)}*` } },
    { type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } },
  ];
  if (words.link) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `<${words.link.url}|${escapeSlack(words.link.label)}>` } });
  if (words.heldBack) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: escapeSlack(words.heldBack) }] });
  const fallback = [words.headline, words.heldBack].filter((part) => part !== null).join(' ');
  return { text: escapeSlack(fallback), blocks };
}

/** The alert as an email: subject and plain text. */
export function emailMessage(input: AlertMessageInput): EmailMessage {
  const words = alertWords(input);
  const lines = [
    words.headline,
    '',
    ...words.details.map(([label, value]) => `${label}: ${value}`),
    ...(words.link ? ['', `${words.link.label}: ${words.link.url}`] : []),
    ...(words.heldBack ? ['', words.heldBack] : []),
    '',
    '--',
    `Alerts of Hook account ${input.accountId}. Admins change where they go with hook alerts set, or stop them with hook alerts clear.`,
  ];
  return { subject: `[Hook] ${words.headline}`, text: `${lines.join('\n')}\n` };
}
