import type { App } from '@tinyhttp/app';
import type { ServerResponse } from 'node:http';
import { inject, injectable } from 'tsyringe';
import { z } from 'zod';
import { ACCESS_COOKIE, AuthGuard, bearerToken, REFRESH_COOKIE } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { ApiError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import { appendCookie, clientAddress, cookies, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { emailSchema, nameSchema } from '../core/validation.js';
import { AuthService, type IssuedTokens } from './service.js';

const registerSchema = z.object({
  email: emailSchema,
  password: z.string({ error: 'must be a string' }).min(8, 'must be at least 8 characters').max(1024, 'must be at most 1024 characters'),
  name: nameSchema,
});

const loginSchema = z.object({
  email: emailSchema,
  password: z.string({ error: 'must be a string' }).max(1024, 'must be at most 1024 characters'),
  rememberMe: z.boolean({ error: 'must be a boolean' }).optional().default(false),
});

const refreshSchema = z.object({ refreshToken: z.string({ error: 'must be a string' }).min(1).optional() });

@injectable()
export class AuthRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(AuthService) private readonly auth: AuthService,
    @inject(AuthGuard) private readonly guard: AuthGuard,
  ) {}

  register(app: App): void {
    app.post('/api/auth/register', async (req, res) => {
      const input = await jsonBody(req, res, registerSchema);
      const signedIn = await this.auth.register(input);
      this.setAuthCookies(res, signedIn);
      sendCreated(res, '/api/auth/me', signedIn.body);
    });

    app.post('/api/auth/login', async (req, res) => {
      const input = await jsonBody(req, res, loginSchema);
      const signedIn = await this.auth.login(input, clientAddress(req, this.config.trustProxy));
      this.setAuthCookies(res, signedIn);
      sendJson(res, 200, signedIn.body);
    });

    app.post('/api/auth/refresh', async (req, res) => {
      const input = await jsonBody(req, res, refreshSchema);
      const token = input.refreshToken ?? cookies(req)[REFRESH_COOKIE];
      if (!token) throw refreshMissing();
      const issued = await this.auth.refresh(token);
      this.setAuthCookies(res, issued);
      sendJson(res, 200, issued.pair);
    });

    app.post('/api/auth/logout', async (req, res) => {
      const input = await jsonBody(req, res, refreshSchema);
      await this.auth.logout(input.refreshToken ?? cookies(req)[REFRESH_COOKIE], bearerToken(req));
      this.clearAuthCookies(res);
      sendJson(res, 200, { ok: true });
    });

    app.get('/api/auth/me', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.auth.me(principal.userId));
    });
  }

  /** Sets both cookies of API.md §3 for a freshly issued pair; no cache may keep a response that carries tokens. */
  setAuthCookies(res: ServerResponse, { pair, session }: IssuedTokens): void {
    res.setHeader('Cache-Control', 'no-store');
    const secure = this.config.cookieSecure;
    appendCookie(res, ACCESS_COOKIE, pair.accessToken, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      maxAge: pair.expiresIn,
      secure,
    });
    const secondsLeft = Math.floor((session.expires_at.getTime() - Date.now()) / 1000);
    appendCookie(res, REFRESH_COOKIE, pair.refreshToken, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/api/auth',
      secure,
      ...(session.remember_me ? { maxAge: Math.max(0, secondsLeft) } : {}),
    });
  }

  private clearAuthCookies(res: ServerResponse): void {
    const secure = this.config.cookieSecure;
    appendCookie(res, ACCESS_COOKIE, '', { httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 0, secure });
    appendCookie(res, REFRESH_COOKIE, '', { httpOnly: true, sameSite: 'Strict', path: '/api/auth', maxAge: 0, secure });
  }
}

function refreshMissing() {
  return new ApiError(401, 'INVALID_REFRESH_TOKEN', 'No refresh token was sent');
}
