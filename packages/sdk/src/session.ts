import { BandApiError, localProblem } from './errors.js';
import type { TokenPair } from './types.js';
import { fromBase64url } from './base64url.js';

export interface Tokens {
  accessToken: string | undefined;
  refreshToken: string | undefined;
}

/**
 * Where a token pair is kept between runs and shared between processes (a file, a keychain). With a store,
 * a refresh runs inside `withRefreshLock`, reloads the stored pair first and uses it when another process
 * already rotated it; only when the stored pair is still the one this client holds does it rotate it, and
 * then it saves the new pair. The server revokes a whole session when a rotated refresh token is presented
 * again, so processes sharing one pair need the lock.
 */
export interface TokenStore {
  /** The stored pair; undefined when signed out (in this process or another). */
  load(): Promise<Pick<TokenPair, 'accessToken' | 'refreshToken'> | undefined>;
  save(pair: TokenPair): Promise<void>;
  /** Runs `refresh` while no other process refreshes the same pair; without it, refreshes are not serialised. */
  withRefreshLock?<T>(refresh: () => Promise<T>): Promise<T>;
}

export interface TokenSessionOptions {
  /** Called with every new token pair (login, register, refresh) so the caller can persist it. */
  onTokens?: (pair: TokenPair) => void | Promise<void>;
  /** Shares the pair with other processes: refreshes reload, lock and save through it. */
  tokenStore?: TokenStore;
  /** Trades a refresh token for a new pair (the server's refresh endpoint). */
  rotate: (refreshToken: string) => Promise<TokenPair>;
}

/** Refresh this long before expiry, but never earlier than a tenth of the token's lifetime before it. */
const REFRESH_MARGIN_SECONDS = 30;

/**
 * The credentials a client sends: the token pair it holds, when to refresh it, and the refresh itself
 * (one at a time in this process, and under the token store's lock across processes).
 */
export class TokenSession {
  private readonly onTokens: TokenSessionOptions['onTokens'];
  private readonly tokenStore: TokenStore | undefined;
  private readonly rotateWith: TokenSessionOptions['rotate'];
  private accessToken: string | undefined;
  private refreshToken: string | undefined;
  /** When to refresh the current access token proactively (ms since epoch); Infinity when unknown. */
  private refreshAt = Infinity;
  /** The refresh in flight, shared by every call that needs it. */
  private refreshing: Promise<TokenPair> | undefined;

  constructor(options: TokenSessionOptions) {
    this.onTokens = options.onTokens;
    this.tokenStore = options.tokenStore;
    this.rotateWith = options.rotate;
  }

  get tokens(): Tokens {
    return { accessToken: this.accessToken, refreshToken: this.refreshToken };
  }

  setTokens(tokens: Partial<Tokens>): void {
    this.accessToken = tokens.accessToken;
    this.refreshToken = tokens.refreshToken;
    this.refreshAt = this.accessToken ? refreshTime(this.accessToken) : Infinity;
  }

  /** Keeps a new pair, saves it in the token store and hands it to onTokens. */
  async storeTokens(pair: TokenPair): Promise<void> {
    this.setTokens(pair);
    await this.tokenStore?.save(pair);
    await this.onTokens?.(pair);
  }

  /** Rotates the token pair; concurrent callers share one refresh request. */
  refresh(): Promise<TokenPair> {
    this.refreshing ??= this.refreshShared().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** An access token that is not about to expire, refreshing first when needed. */
  async freshAccessToken(): Promise<string | undefined> {
    if (this.accessToken && this.refreshToken && Date.now() >= this.refreshAt) await this.refresh();
    return this.accessToken;
  }

  /**
   * With a token store: under its lock, the stored pair wins when another process already rotated the one
   * this client holds (and its access token is not due yet); else that pair is rotated here.
   */
  private async refreshShared(): Promise<TokenPair> {
    const store = this.tokenStore;
    if (!store) return this.rotate();
    const held = this.refreshToken;
    const underLock = store.withRefreshLock?.bind(store) ?? ((refresh: () => Promise<TokenPair>) => refresh());
    return underLock(async () => {
      const stored = await store.load();
      if (!stored) {
        this.setTokens({});
        throw localProblem('UNAUTHENTICATED', 'Signed out meanwhile: sign in again');
      }
      if (stored.refreshToken !== held && Date.now() < refreshTime(stored.accessToken)) {
        this.setTokens(stored);
        return withExpiry(stored);
      }
      this.setTokens(stored);
      return this.rotate();
    });
  }

  private async rotate(): Promise<TokenPair> {
    const refreshToken = this.refreshToken;
    if (!refreshToken) {
      throw localProblem('UNAUTHENTICATED', 'No refresh token: sign in again');
    }
    try {
      const pair = await this.rotateWith(refreshToken);
      await this.storeTokens(pair);
      return pair;
    } catch (error) {
      // A dead refresh token stays dead: forget the pair so later calls do not keep presenting it.
      if (error instanceof BandApiError && error.status === 401 && this.refreshToken === refreshToken) {
        this.setTokens({});
      }
      throw error;
    }
  }
}

/** A stored pair as a TokenPair: `expiresIn` from the access token's `exp`. */
function withExpiry(pair: Pick<TokenPair, 'accessToken' | 'refreshToken'>): TokenPair {
  const exp = claims(pair.accessToken).exp;
  const expiresIn = typeof exp === 'number' ? Math.max(0, Math.floor(exp - Date.now() / 1000)) : 0;
  return { accessToken: pair.accessToken, refreshToken: pair.refreshToken, expiresIn };
}

/** When to refresh an access token proactively, from its `exp` and `iat` claims. */
function refreshTime(accessToken: string): number {
  const payload = claims(accessToken);
  if (typeof payload.exp !== 'number') return Infinity;
  const lifetime = typeof payload.iat === 'number' ? payload.exp - payload.iat : REFRESH_MARGIN_SECONDS * 10;
  return (payload.exp - Math.min(REFRESH_MARGIN_SECONDS, lifetime / 10)) * 1000;
}

/** The claims of a JWT, unverified (the server verifies); none when it is not one. */
function claims(token: string): { exp?: unknown; iat?: unknown } {
  try {
    return JSON.parse(new TextDecoder().decode(fromBase64url(token.split('.')[1] ?? ''))) as { exp?: unknown; iat?: unknown };
  } catch {
    return {};
  }
}
