import type { PersonalAccessToken, TokenScope } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { TOKENS_CHANNEL } from '../core/personal-access-tokens-repository.js';

interface TokenRow {
  id: string;
  name: string;
  scope: TokenScope;
  projectIds: string[] | null;
  tokenHint: string;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
}

const toToken = (row: TokenRow): PersonalAccessToken => ({
  id: row.id,
  name: row.name,
  scope: row.scope,
  projectIds: row.projectIds,
  tokenHint: row.tokenHint,
  createdAt: row.createdAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
});

export interface NewToken {
  userId: string;
  name: string;
  tokenHash: string;
  tokenHint: string;
  scope: TokenScope;
  projectIds: string[] | null;
  expiresInSeconds: number;
}

/** A user's personal access tokens (the AuthGuard's lookup is in core/personal-access-tokens-repository.ts). */
@injectable()
export class TokensRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Records a token unless the user already has `max` live ones (then null). The user's row lock makes the
   * count hold under parallel requests.
   */
  async insertWithin(max: number, token: NewToken): Promise<PersonalAccessToken | null> {
    return this.sql.begin(async (tx) => {
      await tx`select 1 from users where id = ${token.userId} for no key update`;
      const [live] = await tx<{ count: number }[]>`
        select count(*)::int as count from personal_access_tokens where user_id = ${token.userId} and expires_at > now()`;
      return live!.count >= max ? null : this.insert(tx, token);
    });
  }

  private async insert(tx: Queryable, token: NewToken): Promise<PersonalAccessToken> {
    const [row] = await tx<TokenRow[]>`
      insert into personal_access_tokens (user_id, name, token_hash, token_hint, scope, project_ids, expires_at)
      values (${token.userId}, ${token.name}, ${token.tokenHash}, ${token.tokenHint}, ${token.scope},
              ${token.projectIds}::uuid[], now() + make_interval(secs => ${token.expiresInSeconds}))
      returning id, name, scope, project_ids::text[], token_hint, created_at, expires_at, last_used_at`;
    return toToken(row!);
  }

  /** One of the user's live tokens; undefined when it is not theirs, or expired. */
  async findLive(userId: string, id: string): Promise<PersonalAccessToken | undefined> {
    const [row] = await this.sql<TokenRow[]>`
      select id, name, scope, project_ids::text[], token_hint, created_at, expires_at, last_used_at
      from personal_access_tokens
      where user_id = ${userId} and id = ${id} and expires_at > now()`;
    return row && toToken(row);
  }

  /** The user's live tokens, newest first. */
  async listLive(userId: string): Promise<PersonalAccessToken[]> {
    const rows = await this.sql<TokenRow[]>`
      select id, name, scope, project_ids::text[], token_hint, created_at, expires_at, last_used_at
      from personal_access_tokens
      where user_id = ${userId} and expires_at > now()
      order by created_at desc, id`;
    return rows.map(toToken);
  }

  /**
   * Deletes tokens that expired more than `afterSeconds` ago (the purge job); they were refused since they
   * expired. Answers how many went.
   */
  async deleteExpired(afterSeconds: number): Promise<number> {
    const deleted = await this.sql`delete from personal_access_tokens where expires_at < now() - make_interval(secs => ${afterSeconds})`;
    return deleted.count;
  }

  /** Deletes one of the user's tokens; every instance closes the event sockets it opened. False when it is not theirs. */
  async delete(userId: string, id: string): Promise<boolean> {
    return (await this.deleteWhere(this.sql, userId, id)) > 0;
  }

  /** Ends every token of the user (their account is deleted, their password reset), in the caller's transaction; answers how many. */
  async deleteAllOf(tx: Queryable, userId: string): Promise<number> {
    return this.deleteWhere(tx, userId, null);
  }

  /** Each deleted token is announced on the tokens channel in the same statement, so when and only if it commits. */
  private async deleteWhere(tx: Queryable, userId: string, id: string | null): Promise<number> {
    const rows = await tx`
      with deleted as (
        delete from personal_access_tokens
        where user_id = ${userId} ${id === null ? tx`` : tx`and id = ${id}`}
        returning id
      )
      select pg_notify(${TOKENS_CHANNEL}, id::text) from deleted`;
    return rows.length;
  }
}
