import type { ServerResponse } from 'node:http';
import { inject, injectable } from 'tsyringe';
import { ACCESS_COOKIE, REFRESH_COOKIE } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { appendCookie } from '../core/http.js';
import type { IssuedTokens } from './service.js';

/** The two token cookies, for every route that signs in (password, identity provider) or out. */
@injectable()
export class AuthCookies {
  constructor(@inject(CONFIG) private readonly config: Config) {}

  /** Sets both cookies for a freshly issued pair; no cache may keep a response that carries tokens. */
  set(res: ServerResponse, { pair, session }: IssuedTokens): void {
    res.setHeader('Cache-Control', 'no-store');
    const secure = this.config.cookieSecure;
    appendCookie(res, ACCESS_COOKIE, pair.accessToken, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      maxAge: pair.expiresIn,
      secure,
    });
    const secondsLeft = Math.floor((session.expiresAt.getTime() - Date.now()) / 1000);
    appendCookie(res, REFRESH_COOKIE, pair.refreshToken, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/api/auth',
      secure,
      ...(session.rememberMe ? { maxAge: Math.max(0, secondsLeft) } : {}),
    });
  }

  clear(res: ServerResponse): void {
    const secure = this.config.cookieSecure;
    appendCookie(res, ACCESS_COOKIE, '', { httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 0, secure });
    appendCookie(res, REFRESH_COOKIE, '', { httpOnly: true, sameSite: 'Strict', path: '/api/auth', maxAge: 0, secure });
  }
}
