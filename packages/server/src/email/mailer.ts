// Outgoing email (§19) through nodemailer over SMTP, on only when SMTP_URL and MAIL_FROM are set. A feature
// queues a mail inside the transaction of what caused it (`queue`); the `email` job sends it, the same
// Message-ID on every attempt, so a send never runs inside a request and a failed one fails no request: the job
// is retried on its schedule. Logs name the mail's id and kind, never its address, content or the SMTP URL.
import { randomUUID } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import type { Queryable } from '../core/database.js';
import { CONFIG, LOGGER, SIGNING_SECRET } from '../core/di.js';
import type { JobRun } from '../core/jobs.js';
import type { Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import { seal, unseal } from '../core/sealed.js';
import { EmailsRepository } from './repository.js';

/** What one mail says: plain text, with a minimal HTML alternative whose every user string is escaped. */
export interface MailContent {
  subject: string;
  text: string;
  html: string;
  /** Extra headers (List-Unsubscribe…). */
  headers?: Record<string, string>;
}

/**
 * Writes, when its job runs, a mail queued by `queueToCompose`: null sends nothing. So a request queues the
 * same thing whatever the address turns out to be (a known or an unknown account) and takes the same time.
 */
export type Composer = (to: string) => Promise<MailContent | null>;

/** The stored content of a mail still to be composed. */
interface ToCompose {
  compose: true;
}

export interface Mail extends MailContent {
  /** What kind of mail (invitation, password_reset…): for the log and the admin's view. */
  kind: string;
  to: string;
}

const SEAL_PURPOSE = 'email-content';
/** How long one SMTP conversation may take before the attempt counts as failed. */
const SMTP_TIMEOUT_MS = 30_000;

@injectable()
export class Mailer {
  private transport: Transporter<SMTPTransport.SentMessageInfo> | null = null;
  private readonly composers = new Map<string, Composer>();

  constructor(
    @inject(EmailsRepository) private readonly emails: EmailsRepository,
    @inject(CONFIG) private readonly config: Config,
    @inject(SIGNING_SECRET) private readonly serverSecret: string,
    @inject(LOGGER) private readonly log: Logger,
    @inject(Metrics) private readonly metrics: Metrics,
  ) {}

  /** Whether email is on: features that only mail say so when it is not. */
  get enabled(): boolean {
    return this.config.mail !== null;
  }

  /** Queues `mail` in `tx` (sent by the `email` job after it commits); false, and nothing queued, with email off. */
  async queue(tx: Queryable, mail: Mail): Promise<boolean> {
    if (!this.enabled) return false;
    const id = randomUUID();
    const content: MailContent = { subject: mail.subject, text: mail.text, html: mail.html, ...(mail.headers ? { headers: mail.headers } : {}) };
    await this.emails.insert(tx, { id, kind: mail.kind, toAddress: mail.to, content: seal(this.serverSecret, SEAL_PURPOSE, id, JSON.stringify(content)) });
    return true;
  }

  /** Mails of `kind` queued by `queueToCompose` are written by `composer` (registered in the composition root). */
  composeWith(kind: string, composer: Composer): void {
    this.composers.set(kind, composer);
  }

  /** Queues a mail of `kind` to `to` that its `composeWith` composer writes when it is sent; false with email off. */
  async queueToCompose(tx: Queryable, kind: string, to: string): Promise<boolean> {
    if (!this.enabled) return false;
    const id = randomUUID();
    const content: ToCompose = { compose: true };
    await this.emails.insert(tx, { id, kind, toAddress: to, content: seal(this.serverSecret, SEAL_PURPOSE, id, JSON.stringify(content)) });
    return true;
  }

  /** The `email` job's handler: sends the mail unless it went already; a throw is a failed attempt, retried. */
  run = async (job: JobRun<{ messageId: string }>): Promise<void> => {
    const row = await this.emails.find(job.payload.messageId);
    if (!row || row.sentAt !== null || row.content === null) return;
    const opened = unseal(this.serverSecret, SEAL_PURPOSE, row.id, row.content);
    if (opened === null || this.config.mail === null) {
      // The server's secret changed, or email was turned off, since it was queued: it cannot go, and never will.
      this.log.warn('email dropped', { messageId: row.id, kind: row.kind, reason: opened === null ? 'content no longer opens' : 'email is off' });
      await this.emails.markSent(row.id);
      return;
    }
    let content = JSON.parse(opened) as MailContent | ToCompose;
    if ('compose' in content) {
      const composed = await this.composers.get(row.kind)?.(row.toAddress);
      if (!composed) {
        await this.emails.markSent(row.id);
        return;
      }
      // Kept, sealed, before the first attempt: a retry sends this same mail (the same link), not a new one.
      await this.emails.setContent(row.id, seal(this.serverSecret, SEAL_PURPOSE, row.id, JSON.stringify(composed)));
      content = composed;
    }
    try {
      await this.smtp().sendMail({
        from: this.config.mail.from,
        to: row.toAddress,
        subject: content.subject,
        text: content.text,
        html: content.html,
        messageId: this.messageId(row.id),
        ...(content.headers ? { headers: content.headers } : {}),
      });
    } catch (error) {
      // SMTP errors can quote the conversation: only their code and response code go to the log.
      const { code, responseCode } = (error ?? {}) as { code?: string; responseCode?: number };
      this.log.warn('email attempt failed', { messageId: row.id, kind: row.kind, attempt: job.attempt, code: code ?? null, responseCode: responseCode ?? null });
      this.metrics.emails.inc({ outcome: 'failed' });
      throw new Error(`SMTP send failed${code ? ` (${code}${responseCode ? ` ${responseCode}` : ''})` : ''}`);
    }
    await this.emails.markSent(row.id);
    this.metrics.emails.inc({ outcome: 'sent' });
    this.log.info('email sent', { messageId: row.id, kind: row.kind });
  };

  /** `<uuid@host of PUBLIC_URL>`: the same on every attempt of one mail. */
  messageId(id: string): string {
    return `<${id}@${new URL(this.config.publicUrl).hostname}>`;
  }

  private smtp(): Transporter<SMTPTransport.SentMessageInfo> {
    this.transport ??= nodemailer.createTransport({
      url: this.config.mail!.smtpUrl,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    } as SMTPTransport.Options);
    return this.transport;
  }
}
