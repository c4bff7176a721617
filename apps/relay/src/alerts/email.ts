/**
 * Mailing alerts through the operator's SMTP server (HOOK_SMTP_URL, docs/alerts.md#email).
 * One pooled nodemailer transport per relay process; short time limits, so a server that
 * stops answering fails the try (it is retried) rather than holding the sender.
 */
import { createTransport, type Transporter } from 'nodemailer';
import { ALERT_ERROR_MAX_CHARS } from '@hook/core';
import type { EmailMessage } from './messages.ts';

/** How long connecting, the greeting and each step of a send may take, in ms. */
const SMTP_TIMEOUT_MS = 10_000;

export type EmailOutcome = { ok: true } | { ok: false; error: string };

export class EmailSender {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(options: { smtpUrl: string; from: string }) {
    this.#from = options.from;
    this.#transport = createTransport({
      url: options.smtpUrl,
      pool: true,
      maxConnections: 2,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS * 3,
    } as Parameters<typeof createTransport>[0]);
  }

  /** Mails the message to `to`, one message with every address. Never throws. */
  async send(to: string[], message: EmailMessage): Promise<EmailOutcome> {
    try {
      await this.#transport.sendMail({ from: this.#from, to, subject: message.subject, text: message.text });
      return { ok: true };
    } catch (error) {
      // SMTP errors carry the server's reply (`response`), which says more than the message.
      const err = error as Error & { response?: string };
      return { ok: false, error: (err.response ?? err.message).slice(0, ALERT_ERROR_MAX_CHARS) };
    }
  }

  close(): void {
    this.#transport.close();
  }
}
