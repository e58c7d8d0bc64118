// Self-service password reset (§19). `forgot` answers alike, in alike time, for every email: it counts the
// request (5 an hour per email and per client address) and queues a mail that its job composes, looking the
// email up only then: an account with a password gets a one-time link (256 bits, stored hashed, 1 hour, single
// use), one that signs in only through the identity provider is told to use it, an unknown email gets nothing.
// `reset` uses a link up, sets the password and ends every session of the account.
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CONFIG, SQL } from '../core/di.js';
import { DomainError, invalidField } from '../core/errors.js';
import { addressKey, networkOf } from '../core/networks.js';
import { SessionCache } from '../core/session-cache.js';
import { hashToken, randomToken } from '../core/tokens.js';
import { Mailer, type MailContent } from '../email/mailer.js';
import { passwordResetMail, useProviderMail } from '../email/messages.js';
import { Passwords } from './passwords.js';
import { PasswordResetRepository } from './password-reset-repository.js';
import { AuthRepository } from './repository.js';

export const PASSWORD_RESET_KIND = 'password_reset';
const LINK_LIFETIME_MS = 3600_000;
const REQUESTS_PER_HOUR = 5;

@injectable()
export class PasswordResets {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(CONFIG) private readonly config: Config,
    @inject(PasswordResetRepository) private readonly resets: PasswordResetRepository,
    @inject(AuthRepository) private readonly users: AuthRepository,
    @inject(SessionCache) private readonly sessions: SessionCache,
    @inject(Passwords) private readonly passwords: Passwords,
    @inject(Mailer) private readonly mailer: Mailer,
  ) {}

  async forgot(email: string, clientIp: string): Promise<void> {
    if (!this.mailer.enabled) {
      throw new DomainError('UNAVAILABLE', 'Email is off on this server, so it cannot send a reset link: ask its admin to reset your password');
    }
    await this.sql.begin(async (tx) => {
      const wait = await this.resets.reserveRequest(tx, email, addressKey(clientIp), REQUESTS_PER_HOUR, 3600);
      if (wait !== null) throw new DomainError('RATE_LIMITED', 'Too many password reset requests; try again later', { retryAfterSeconds: wait });
      await this.mailer.queueToCompose(tx, PASSWORD_RESET_KIND, email);
    });
  }

  /** The `password_reset` mail's composer (Mailer.composeWith), run by the email job. */
  compose = async (email: string): Promise<MailContent | null> => {
    const user = await this.users.findUserByEmail(email);
    if (!user || !(await this.resets.isActive(user.id))) return null;
    if (user.passwordHash === null) return (await this.resets.hasIdentity(user.id)) ? useProviderMail({ name: user.name, signInUrl: this.config.publicUrl }) : null;
    const token = randomToken();
    await this.resets.insert(user.id, hashToken(token), new Date(Date.now() + LINK_LIFETIME_MS));
    return passwordResetMail({ name: user.name, resetUrl: `${this.config.publicUrl}/reset/${token}` });
  };

  async reset(token: string, newPassword: string, clientIp: string): Promise<void> {
    const passwordHash = await this.passwords.hash(newPassword, { network: networkOf(clientIp) });
    await this.sql.begin(async (tx) => {
      const userId = await this.resets.use(tx, hashToken(token));
      if (userId === null) throw invalidField('token', 'is unknown, used or expired: ask for a new link');
      await this.users.setPassword(tx, userId, passwordHash, false);
      await this.resets.dropAllOf(tx, userId);
      await this.sessions.revokeAllOfUser(tx, userId);
    });
  }
}
