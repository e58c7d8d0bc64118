import type { Config } from './config.js';

/**
 * A browser page's origin the server trusts with its users' cookies: its own (PUBLIC_URL) or one of CORS_ORIGINS.
 * Read per request: with PORT=0 the server learns its own URL only once it listens.
 */
export function isTrustedOrigin(config: Config, origin: string): boolean {
  try {
    return [config.publicUrl, ...config.corsOrigins].some((url) => new URL(url).origin === new URL(origin).origin);
  } catch {
    return false;
  }
}
