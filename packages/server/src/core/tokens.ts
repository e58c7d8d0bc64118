import { createHash, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { CLOCK, CONFIG, SIGNING_SECRET } from './di.js';
import { DomainError, unauthenticated } from './errors.js';

export interface AccessClaims {
  sub: string;
  sid: string;
}

/**
 * Bounds the memory of the verified tokens: beyond this many the oldest is dropped (and verified again when
 * used). An expired token is not kept either (see `remember`), so this bound is reached only by more
 * tokens in use within one token lifetime.
 */
const MAX_VERIFIED_TOKENS = 10_000;

/** Opaque random tokens (refresh, share) are stored only as their SHA-256. */
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
export const randomToken = (): string => randomBytes(32).toString('base64url');

/**
 * One per server (container-scoped): every route group has an AuthGuard of its own, and as a plain
 * injectable each got its own verified-token cache, fifteen of them, each up to MAX_VERIFIED_TOKENS, with
 * a token's signature checked once in each.
 */
@scoped(Lifecycle.ContainerScoped)
export class AccessTokens {
  /**
   * Handed a string, jsonwebtoken tries `createPublicKey` on it (and fails) before making a secret key, on
   * every call: about half the CPU of an authenticated request. The key is made once instead.
   */
  private readonly key: KeyObject;
  /**
   * Tokens whose signature checked out, with their expiry: a client sends the same token with every request,
   * and its signature never stops matching, so only the expiry is checked again (jsonwebtoken's verify was
   * a fifth of the CPU of an authenticated request). Whether its session is still active is the session
   * cache's question, asked every time.
   */
  private readonly verified = new Map<string, AccessClaims & { exp: number }>();

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(SIGNING_SECRET) secret: string,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.key = createSecretKey(Buffer.from(secret));
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  get ttlSeconds(): number {
    return this.config.accessTokenTtlSeconds;
  }

  sign(claims: AccessClaims): string {
    return jwt.sign({ sid: claims.sid, iat: this.nowSeconds() }, this.key, {
      algorithm: 'HS256',
      subject: claims.sub,
      expiresIn: this.config.accessTokenTtlSeconds,
    });
  }

  /** Verifies signature (HS256 only) and expiry: 401 TOKEN_EXPIRED or UNAUTHENTICATED. */
  verify(token: string, { ignoreExpiration = false } = {}): AccessClaims {
    const known = this.verified.get(token) ?? this.checkSignature(token);
    // jsonwebtoken's rule: expired from the second `exp` names.
    if (this.nowSeconds() >= known.exp) {
      this.verified.delete(token);
      if (!ignoreExpiration) throw new DomainError('TOKEN_EXPIRED', 'The access token has expired; refresh it');
    }
    return { sub: known.sub, sid: known.sid };
  }

  /** How many verified tokens are remembered now (the memory bound's test reads it). */
  get verifiedCount(): number {
    return this.verified.size;
  }

  private checkSignature(token: string): AccessClaims & { exp: number } {
    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, this.key, { algorithms: ['HS256'], ignoreExpiration: true });
    } catch {
      throw unauthenticated('The access token is invalid');
    }
    if (typeof payload === 'string' || typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number') {
      throw unauthenticated('The access token is invalid');
    }
    const known = { sub: payload.sub, sid: payload.sid, exp: payload.exp };
    this.remember(token, known);
    return known;
  }

  /**
   * Keeps a token until it expires. Every token of a server has the same lifetime, so the oldest remembered
   * are about the first to expire: dropping expired ones from that end keeps the cache to the tokens of one
   * lifetime without walking all of it (one remembered late behind them goes once it reaches that end).
   */
  private remember(token: string, known: AccessClaims & { exp: number }): void {
    const now = this.nowSeconds();
    if (now >= known.exp) return;
    for (const [oldest, claims] of this.verified) {
      if (claims.exp > now && this.verified.size < MAX_VERIFIED_TOKENS) break;
      this.verified.delete(oldest);
    }
    this.verified.set(token, known);
  }
}
