import type { NotificationKind, NotificationPreferences, NotificationPreferencesChange } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Sql } from '../core/database.js';
import { SIGNING_SECRET, SQL } from '../core/di.js';
import { Mailer } from '../email/mailer.js';
import { type EmailPreferences, NotificationsRepository } from './repository.js';
import { readUnsubscribeToken } from './unsubscribe.js';

/** The caller's email preferences (§19), and the one-click unsubscribe that turns one kind off without signing in. */
@injectable()
export class NotificationsService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(SIGNING_SECRET) private readonly secret: string,
    @inject(NotificationsRepository) private readonly repository: NotificationsRepository,
    @inject(Mailer) private readonly mailer: Mailer,
  ) {}

  async get(principal: Principal): Promise<NotificationPreferences> {
    return this.answer(await this.repository.preferences(this.sql, principal.userId));
  }

  async update(principal: Principal, change: NotificationPreferencesChange): Promise<NotificationPreferences> {
    return this.sql.begin(async (tx) => {
      await this.repository.setPreferences(tx, principal.userId, change.email);
      return this.answer(await this.repository.preferences(tx, principal.userId));
    });
  }

  /** Whether an unsubscribe link is one this server signed (the page's GET changes nothing). */
  kindOf(token: string): NotificationKind | null {
    return readUnsubscribeToken(this.secret, token)?.kind ?? null;
  }

  /** Turns the link's kind off (idempotent); null for a link this server did not sign. */
  async unsubscribe(token: string): Promise<NotificationKind | null> {
    const read = readUnsubscribeToken(this.secret, token);
    if (!read) return null;
    const off: Partial<EmailPreferences> = read.kind === 'digest' ? { digest: 'off' } : { [read.kind]: false };
    // An account deleted since the mail: nothing is left to turn off, and the page says it is done all the same.
    await this.sql.begin(async (tx) => {
      const [user] = await tx`select 1 from users where id = ${read.userId}`;
      if (user) await this.repository.setPreferences(tx, read.userId, off);
    });
    return read.kind;
  }

  private answer(email: EmailPreferences): NotificationPreferences {
    return { email, emailEnabled: this.mailer.enabled };
  }
}
