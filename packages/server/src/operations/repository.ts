import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { PLAY_WINDOW_MINUTES } from '../shares/repository.js';

/** How many rows of each kind a purge deleted. */
export interface PurgeCounts {
  sessions: number;
  loginFailures: number;
  loginSuccesses: number;
  signInNetworks: number;
  registrationAttempts: number;
  cliLoginCodes: number;
  invitations: number;
  shareLinks: number;
  /** Who fetched a link's preview longer than PLAY_WINDOW_MINUTES ago: their next fetch is a play anyway (§20). */
  shareLinkListeners: number;
}

@injectable()
export class OperationsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** A round trip to the database; rejects when it cannot be reached. */
  async ping(): Promise<void> {
    await this.sql`select 1`;
  }

  /**
   * Deletes what can no longer be used: expired sessions (their refresh tokens go with them), abuse-limit
   * records older than their window, sign-in networks older than they vouch, and expired one-time codes, invitations and share links.
   * Only `expires_at` decides for the last three, whatever else those tables come to hold.
   */
  async purgeExpired(windows: { loginSeconds: number; registrationSeconds: number; signInNetworkDays: number }): Promise<PurgeCounts> {
    const sessions = await this.sql`delete from sessions where expires_at < now()`;
    const loginFailures = await this.sql`
      delete from login_failures where failed_at < now() - make_interval(secs => ${windows.loginSeconds})`;
    const loginSuccesses = await this.sql`
      delete from login_successes where succeeded_at < now() - make_interval(secs => ${windows.loginSeconds})`;
    const signInNetworks = await this.sql`
      delete from sign_in_networks where signed_in_at < now() - make_interval(days => ${windows.signInNetworkDays})`;
    const registrationAttempts = await this.sql`
      delete from registration_attempts where attempted_at < now() - make_interval(secs => ${windows.registrationSeconds})`;
    const cliLoginCodes = await this.sql`delete from cli_login_codes where expires_at < now()`;
    const invitations = await this.sql`delete from invitations where expires_at < now()`;
    const shareLinks = await this.sql`delete from share_links where expires_at < now()`;
    const shareLinkListeners = await this.sql`
      delete from share_link_listeners where seen_at < now() - make_interval(mins => ${PLAY_WINDOW_MINUTES})`;
    return {
      sessions: sessions.count,
      loginFailures: loginFailures.count,
      loginSuccesses: loginSuccesses.count,
      signInNetworks: signInNetworks.count,
      registrationAttempts: registrationAttempts.count,
      cliLoginCodes: cliLoginCodes.count,
      invitations: invitations.count,
      shareLinks: shareLinks.count,
      shareLinkListeners: shareLinkListeners.count,
    };
  }
}
