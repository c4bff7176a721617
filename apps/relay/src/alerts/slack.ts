/**
 * Posting alerts to a Slack incoming webhook. The URL is the tenant's, so it is treated as
 * a destination is: https only (http only on a relay that allows private destinations,
 * i.e. local development and tests), the private-address rule applied inside the socket's
 * own DNS lookup (the DeliverySender's connections), a time limit, no redirects followed,
 * and no more of the answer kept than ALERT_ERROR_MAX_CHARS.
 */
import type { lookup } from 'node:dns';
import { ALERT_ERROR_MAX_CHARS, SLACK_TIMEOUT_MS } from '@hook/core';
import { DeliverySender } from '../delivery/sender.ts';
import type { SlackMessage } from './messages.ts';

/** Why a Slack webhook URL cannot be used (its scheme), or null. The address is checked where it is connected to. */
export function slackUrlProblem(url: string, { allowPrivate }: { allowPrivate: boolean }): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol === 'https:') return null;
  if (parsed.protocol === 'http:' && allowPrivate) return null;
  return 'must be an https:// URL (Slack incoming webhooks are https://hooks.slack.com/services/…)';
}

export type SlackOutcome = { ok: true } | { ok: false; error: string };

export class SlackPoster {
  readonly #sender: DeliverySender;
  readonly #allowPrivate: boolean;

  constructor(options: { allowPrivateDestinations: boolean; resolve?: typeof lookup | undefined }) {
    this.#allowPrivate = options.allowPrivateDestinations;
    this.#sender = new DeliverySender({ timeoutMs: SLACK_TIMEOUT_MS, allowPrivateDestinations: options.allowPrivateDestinations, ...(options.resolve ? { resolve: options.resolve } : {}) });
  }

  /** POSTs the message; any 2xx is success (Slack answers 200 `ok`). Never throws. */
  async post(url: string, message: SlackMessage): Promise<SlackOutcome> {
    const problem = slackUrlProblem(url, { allowPrivate: this.#allowPrivate });
    if (problem) return { ok: false, error: `the Slack webhook URL ${problem}` };
    const result = await this.#sender.send(url, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify(message)));
    if (result.kind === 'ok') return { ok: true };
    const error = result.status === null ? (result.error ?? 'no answer') : `Slack answered ${result.status}: ${result.body ?? ''}`;
    return { ok: false, error: error.slice(0, ALERT_ERROR_MAX_CHARS) };
  }

  close(): Promise<void> {
    return this.#sender.close();
  }
}
