import type { CreatedPersonalAccessToken, PersonalAccessToken, TokenScope } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import { DomainError, notFound } from '../core/errors.js';
import { PersonalAccessTokenCache } from '../core/personal-access-token-cache.js';
import { generatePersonalAccessToken, tokenHint } from '../core/personal-access-tokens.js';
import { ProjectAccess } from '../core/project-access.js';
import { hashToken } from '../core/tokens.js';
import { TokensRepository } from './repository.js';

/** Live (unexpired) tokens an account may hold: each is a standing credential to audit and revoke. */
export const MAX_LIVE_TOKENS = 100;
/** RATE_LIMITED carries a Retry-After; a place frees when a token is revoked or expires. */
const LIMIT_RETRY_SECONDS = 60;

export interface TokenRequest {
  name: string;
  scope: TokenScope;
  /** Absent: every project of the owner. */
  projectIds?: string[];
  expiresIn: number;
}

/**
 * Personal access tokens for CI and scripts. Only a session reaches these (the app refuses a token on
 * /api/tokens before any route), so a token never mints another.
 */
@injectable()
export class TokensService {
  constructor(
    @inject(TokensRepository) private readonly tokens: TokensRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(PersonalAccessTokenCache) private readonly cache: PersonalAccessTokenCache,
  ) {}

  /** The token itself is in this answer only; its sha256 is what is stored. Each project must be the caller's (else 404). */
  async create(principal: Principal, input: TokenRequest): Promise<CreatedPersonalAccessToken> {
    for (const projectId of input.projectIds ?? []) await this.access.require(principal, 'project', projectId);
    const token = generatePersonalAccessToken();
    const record = await this.tokens.insertWithin(MAX_LIVE_TOKENS, {
      userId: principal.userId,
      name: input.name,
      tokenHash: hashToken(token),
      tokenHint: tokenHint(token),
      scope: input.scope,
      projectIds: input.projectIds ?? null,
      expiresInSeconds: input.expiresIn,
    });
    if (!record) {
      throw new DomainError('RATE_LIMITED', `At most ${MAX_LIVE_TOKENS} live personal access tokens per account: revoke one first`, {
        retryAfterSeconds: LIMIT_RETRY_SECONDS,
      });
    }
    return { ...record, token };
  }

  list(principal: Principal): Promise<PersonalAccessToken[]> {
    return this.tokens.listLive(principal.userId);
  }

  /** The owner's only: another user's token is 404, as an unknown one. */
  async get(principal: Principal, id: string): Promise<PersonalAccessToken> {
    const token = await this.tokens.findLive(principal.userId, id);
    if (!token) throw notFound('Token');
    return token;
  }

  /** The owner's only; it stops working at once here, and on other instances when the notice reaches them. */
  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.tokens.delete(principal.userId, id))) throw notFound('Token');
    this.cache.forget(id);
  }
}
