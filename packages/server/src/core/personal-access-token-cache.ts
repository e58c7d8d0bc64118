import type postgres from 'postgres';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { Clock } from './clock.js';
import type { Sql } from './database.js';
import { CLOCK, SQL } from './di.js';
import { PersonalAccessTokensRepository, TOKENS_CHANNEL } from './personal-access-tokens-repository.js';
import { USERS_CHANNEL } from './session-cache.js';
import type { TokenPrincipal } from './sessions-repository.js';

/** Bounds the memory: beyond this many tokens the least recently loaded one is dropped (and read again when used). */
const MAX_TOKENS = 10_000;

/** How often a token's `lastUsedAt` is written at most. */
const LAST_USED_RESOLUTION_MS = 60_000;

interface CachedToken {
  principal: TokenPrincipal;
  /** When this instance last knew `last_used_at` to be recorded (ms since epoch, on the server's clock; 0: never). */
  lastUsedAt: number;
}

/**
 * The principals of live personal access tokens by the sha256 of the token, kept in memory so that a token
 * costs what a session costs: no query once known (a first use makes the one indexed lookup). As with the
 * SessionCache, PostgreSQL announces what would make an entry stale to every instance: a deleted token on
 * the tokens channel (TokensRepository), a user's changed name, email, role or required password change, or
 * their deletion, on the users channel. The revoking instance drops the token at once. What a token reaches
 * is not cached: project access is checked against the memberships of the moment on every request. Entries
 * are kept only while both channels are listened to; when the LISTEN connection comes back after a drop,
 * everything is dropped.
 */
@scoped(Lifecycle.ContainerScoped)
export class PersonalAccessTokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private listeners: postgres.ListenMeta[] = [];
  private listening = false;
  /** Counts drops; a lookup that overlapped one does not store what it read, which may predate it. */
  private drops = 0;

  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(PersonalAccessTokensRepository) private readonly repository: PersonalAccessTokensRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async start(): Promise<void> {
    this.listeners = await Promise.all([
      this.sql.listen(TOKENS_CHANNEL, (tokenId) => this.drop((token) => token.principal.token.tokenId === tokenId), () => this.dropAll()),
      this.sql.listen(USERS_CHANNEL, (userId) => this.drop((token) => token.principal.userId === userId), () => this.dropAll()),
    ]);
    this.listening = true;
  }

  async stop(): Promise<void> {
    this.listening = false;
    this.dropAll();
    await Promise.all(this.listeners.map((listener) => listener.unlisten()));
  }

  /** The principal of the token whose sha256 is `tokenHash` while it is live; records its use at most once a minute. */
  async principal(tokenHash: string): Promise<TokenPrincipal | null> {
    const now = this.clock.now();
    let cached = this.tokens.get(tokenHash);
    if (cached && cached.principal.token.expiresAt.getTime() <= now) {
      this.tokens.delete(tokenHash);
      return null;
    }
    if (!cached) {
      const dropsBefore = this.drops;
      const found = await this.repository.findActive(tokenHash);
      if (!found) return null;
      cached = { principal: found.principal, lastUsedAt: found.lastUsedAt?.getTime() ?? 0 };
      if (this.listening && this.drops === dropsBefore) this.remember(tokenHash, cached);
    }
    if (now - cached.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      cached.lastUsedAt = now;
      await this.repository.touch(cached.principal.token.tokenId);
    }
    return cached.principal;
  }

  /** Forgets a token this instance revoked, without waiting for the notice. */
  forget(tokenId: string): void {
    this.drop((token) => token.principal.token.tokenId === tokenId);
  }

  /** Forgets every token of a user whose tokens this instance revoked, without waiting for the notices. */
  forgetAllOf(userId: string): void {
    this.drop((token) => token.principal.userId === userId);
  }

  private remember(tokenHash: string, token: CachedToken): void {
    if (this.tokens.size >= MAX_TOKENS) this.tokens.delete(this.tokens.keys().next().value!);
    this.tokens.set(tokenHash, token);
  }

  private drop(matches: (token: CachedToken) => boolean): void {
    this.drops += 1;
    for (const [hash, token] of this.tokens) if (matches(token)) this.tokens.delete(hash);
  }

  private dropAll(): void {
    this.drops += 1;
    this.tokens.clear();
  }
}
