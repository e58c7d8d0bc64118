import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** What the callback needs to finish a sign-in it started, kept in a signed cookie between the two requests. */
export interface IdpFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** A same-origin path to land on after a browser sign-in, or null for APP_URL itself. */
  redirect: string | null;
  /** The command line's loopback URL; set only for a command-line flow. */
  cliRedirect: string | null;
  /** The command line's S256 challenge: its one-time code is exchanged only with the matching verifier. */
  codeChallenge: string | null;
  /** The signed-in account that asked to link the provider's subject (`?link=1`); null for a sign-in. */
  linkUserId: string | null;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export const FLOW_COOKIE = 'idp_flow';
export const FLOW_COOKIE_PATH = '/api/auth/idp';
export const FLOW_SECONDS = 600;

// The signing secret also signs access tokens: a label keeps a MAC made for one from passing as the other.
const MAC_LABEL = 'bandcollab idp flow v1\n';

const flowSchema = z.object({
  state: z.string(),
  nonce: z.string(),
  codeVerifier: z.string(),
  redirect: z.string().nullable(),
  cliRedirect: z.string().nullable(),
  codeChallenge: z.string().nullable(),
  linkUserId: z.string().nullable(),
  expiresAt: z.number(),
});

const mac = (secret: string, payload: string): Buffer =>
  createHmac('sha256', secret).update(MAC_LABEL).update(payload).digest();

/** `<base64url JSON>.<base64url HMAC-SHA256>`. */
export function sealFlow(secret: string, flow: IdpFlow): string {
  const payload = Buffer.from(JSON.stringify(flow)).toString('base64url');
  return `${payload}.${mac(secret, payload).toString('base64url')}`;
}

export type OpenedFlow = { ok: true; flow: IdpFlow } | { ok: false; reason: 'tampered' } | { ok: false; reason: 'expired'; flow: IdpFlow };

/** Checks the signature, then the expiry; a flow past its expiry is still returned so a failure can reach its CLI. */
export function openFlow(secret: string, sealed: string, now = Date.now()): OpenedFlow {
  const [payload, signature, extra] = sealed.split('.');
  if (!payload || !signature || extra !== undefined) return { ok: false, reason: 'tampered' };
  const expected = mac(secret, payload);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'tampered' };
  const parsed = flowSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  if (!parsed.success) return { ok: false, reason: 'tampered' };
  if (parsed.data.expiresAt <= now) return { ok: false, reason: 'expired', flow: parsed.data };
  return { ok: true, flow: parsed.data };
}

/**
 * The `redirect` parameter, honoured only as a path on our own origin: one leading `/`, not `//` or `/\`
 * (which browsers read as another host), no control characters or whitespace (which browsers strip).
 */
export function sameOriginPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return null;
  if (/[\p{Cc}\s]/u.test(value)) return null;
  return value;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** `hostname` as `URL` spells it (IPv6 in brackets). */
export const isLoopbackHost = (hostname: string): boolean => LOOPBACK_HOSTS.has(hostname);

/** The command line's loopback redirect: http on a loopback host with an explicit port, nothing else. */
export function isLoopbackRedirect(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (
    url.protocol === 'http:' &&
    isLoopbackHost(url.hostname) &&
    url.port !== '' &&
    url.username === '' &&
    url.password === '' &&
    url.hash === ''
  );
}

/** RFC 7636 S256: base64url(SHA-256(verifier)), 43 characters. */
const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

export const isS256Challenge = (value: unknown): value is string => typeof value === 'string' && /^[\w-]{43}$/.test(value);

/** Whether `verifier` is the one `challenge` was made from (constant time). */
export function verifierMatches(challenge: string, verifier: string | undefined): boolean {
  if (verifier === undefined) return false;
  const expected = Buffer.from(challenge);
  const given = Buffer.from(s256(verifier));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `base` with one query parameter set, keeping its path and any query it had. */
export function withParam(base: string, name: string, value: string): string {
  const url = new URL(base);
  url.searchParams.set(name, value);
  return url.href;
}
