import { inject, injectable } from 'tsyringe';
import type { Sql } from './database.js';
import { SQL } from './di.js';
import type { Identity, TokenGrant, TokenPrincipal } from './sessions-repository.js';

/** Carries the id of each revoked personal access token, so every instance drops it from its cache and closes its event sockets (4401). */
export const TOKENS_CHANNEL = 'bandcollab_tokens';

type ActiveTokenRow = Identity & TokenGrant & { lastUsedAt: Date | null };

/** The lookup every request with a personal access token makes (the AuthGuard). */
@injectable()
export class PersonalAccessTokensRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** The principal of the token whose sha256 is `tokenHash`, while it is live; one lookup by the unique index. */
  async findActive(tokenHash: string): Promise<{ principal: TokenPrincipal; lastUsedAt: Date | null } | null> {
    const [row] = await this.sql<ActiveTokenRow[]>`
      select t.id as token_id, t.name as token_name, u.id as user_id, u.name, u.email, u.role, u.password_change_required, t.scope, t.project_ids::text[], t.expires_at, t.last_used_at
      from personal_access_tokens t join users u on u.id = t.user_id
      where t.token_hash = ${tokenHash} and t.expires_at > now()`;
    if (!row) return null;
    const { tokenId, tokenName, userId, name, email, role, passwordChangeRequired, scope, projectIds, expiresAt, lastUsedAt } = row;
    return { principal: { userId, name, email, role, passwordChangeRequired, sessionId: null, token: { tokenId, tokenName, scope, projectIds, expiresAt } }, lastUsedAt };
  }

  /** Records a use, unless one was recorded within the last minute (by any instance). */
  async touch(tokenId: string): Promise<void> {
    await this.sql`
      update personal_access_tokens set last_used_at = now()
      where id = ${tokenId} and (last_used_at is null or last_used_at <= now() - interval '1 minute')`;
  }
}
