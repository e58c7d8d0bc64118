import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import type { UserRow } from './repository.js';

/** A provider account: its issuer and its subject there. */
export interface Identity {
  issuer: string;
  subject: string;
}

export interface IssuedCliCode {
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  /** Set for a code that links this identity to `userId` instead of signing in. */
  linkIssuer: string | null;
  linkSubject: string | null;
}

@injectable()
export class IdpRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async findLinkedUser(issuer: string, subject: string): Promise<UserRow | null> {
    const [row] = await this.sql<UserRow[]>`
      select u.* from identities i join users u on u.id = i.user_id
      where i.issuer = ${issuer} and i.subject = ${subject}`;
    return row ?? null;
  }

  /** Links a subject nobody has yet to a new account, in the transaction that creates it. */
  async linkNew(tx: Queryable, issuer: string, subject: string, userId: string): Promise<void> {
    await tx`insert into identities (issuer, subject, user_id) values (${issuer}, ${subject}, ${userId})`;
  }

  /**
   * Links the subject to `userId` unless it is linked already; returns the account it is linked to now
   * (`userId`, or whoever had it), or null when `userId` no longer exists.
   */
  async linkExisting(issuer: string, subject: string, userId: string): Promise<string | null> {
    await this.sql`
      insert into identities (issuer, subject, user_id) select ${issuer}, ${subject}, id from users where id = ${userId}
      on conflict (issuer, subject) do nothing`;
    const [row] = await this.sql<{ userId: string }[]>`select user_id from identities where issuer = ${issuer} and subject = ${subject}`;
    return row?.userId ?? null;
  }

  /** Stores a new code (its hash) and drops codes already past their expiry. */
  async insertCliCode(
    code: { hash: string; userId: string; redirectUri: string; codeChallenge: string; link: Identity | null },
    lifetimeSeconds: number,
  ): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`delete from cli_login_codes where expires_at < now()`;
      await tx`
        insert into cli_login_codes (code_hash, user_id, redirect_uri, code_challenge, link_issuer, link_subject, expires_at)
        values (${code.hash}, ${code.userId}, ${code.redirectUri}, ${code.codeChallenge}, ${code.link?.issuer ?? null},
                ${code.link?.subject ?? null}, now() + make_interval(secs => ${lifetimeSeconds}))`;
    });
  }

  /** Marks an unused, unexpired code used and returns it; null when it is unknown, used or expired. */
  async consumeCliCode(codeHash: string): Promise<IssuedCliCode | null> {
    const [row] = await this.sql<IssuedCliCode[]>`
      update cli_login_codes set used_at = now()
      where code_hash = ${codeHash} and used_at is null and expires_at > now()
      returning user_id, redirect_uri, code_challenge, link_issuer, link_subject`;
    return row ?? null;
  }
}
