import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import type { UserRow } from './repository.js';

@injectable()
export class IdpRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async findLinkedUser(issuer: string, subject: string): Promise<UserRow | null> {
    const [row] = await this.sql<UserRow[]>`
      select u.* from identities i join users u on u.id = i.user_id
      where i.issuer = ${issuer} and i.subject = ${subject}`;
    return row ?? null;
  }

  async link(issuer: string, subject: string, userId: string): Promise<void> {
    await this.sql`
      insert into identities (issuer, subject, user_id) values (${issuer}, ${subject}, ${userId})
      on conflict (issuer, subject) do nothing`;
  }

  /** Stores a new code (its hash) and drops codes already past their expiry. */
  async insertCliCode(codeHash: string, userId: string, redirectUri: string, lifetimeSeconds: number): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`delete from cli_login_codes where expires_at < now()`;
      await tx`
        insert into cli_login_codes (code_hash, user_id, redirect_uri, expires_at)
        values (${codeHash}, ${userId}, ${redirectUri}, now() + make_interval(secs => ${lifetimeSeconds}))`;
    });
  }

  /** Marks an unused, unexpired code used and returns it; null when it is unknown, used or expired. */
  async consumeCliCode(codeHash: string): Promise<{ user_id: string; redirect_uri: string } | null> {
    const [row] = await this.sql<{ user_id: string; redirect_uri: string }[]>`
      update cli_login_codes set used_at = now()
      where code_hash = ${codeHash} and used_at is null and expires_at > now()
      returning user_id, redirect_uri`;
    return row ?? null;
  }
}
