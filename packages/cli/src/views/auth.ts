// How band shows signing in, the servers it knows and the caller's account to people (auth).
import type { CurrentToken, Me, PasswordChangeResult, User } from '@bandcollab/sdk';
import { counted, formatTime, type Output } from '../render.js';
import type { ProfileUser } from '../settings.js';
import { tokenProjects, tokenTable } from './tokens.js';

/** The server answers alike whether or not the email has an account: so does this. */
export function forgotPasswordView(email: string, server: string): string {
  return `If ${email} has an account on ${server}, a link to choose a new password is on its way; it works once, within an hour.`;
}

/** A sign-in that was stored: "Logged in to <server> as Ana <ana@…> (credentials in …)". */
export function signedInView(verb: string, apiUrl: string, user: User, location: string): string {
  return `${verb} to ${apiUrl} as ${user.name} <${user.email}> (credentials in ${location})`;
}

export function loggedOutView(wasLoggedIn: boolean, apiUrl: string): string {
  return wasLoggedIn ? `Logged out of ${apiUrl}` : `Not logged in to ${apiUrl}`;
}

export function statusView(
  me: Me,
  where: { apiUrl: string; profile: string; credentials: string; servers: readonly StoredServer[] },
  token: { token: CurrentToken; projectNames: ReadonlyMap<string, string> } | null = null,
): string {
  const lines = [
    `Logged in to ${where.apiUrl} as ${me.name} <${me.email}>${me.role === 'ADMIN' ? ' (site admin)' : ''}`,
    `Profile:     ${where.profile}`,
    `Credentials: ${where.credentials}`,
    ...where.servers.map((server, index) => `${index === 0 ? 'Servers:' : ''.padEnd(8)}     ${server.isDefault ? '*' : ' '} ${server.origin}  ${server.user.name} <${server.user.email}>`),
  ];
  if (token) {
    lines.push(
      `Token:       a personal access token, scope ${token.token.scope}, expires ${formatTime(token.token.expiresAt)}`,
      `Projects:    ${tokenProjects(token.token.projectIds, token.projectNames)}`,
    );
  }
  return lines.join('\n');
}

/** A server this profile is logged in to, for `band auth status`. */
export interface StoredServer {
  origin: string;
  user: ProfileUser;
  /** The one band uses without --api-url or BAND_API_URL. */
  isDefault: boolean;
}

/** A login on another server than the default: the default stays. */
export function defaultKeptView(defaultUrl: string, apiUrl: string): string {
  return `band still uses ${defaultUrl} by default; to use ${apiUrl}: band auth use ${apiUrl}`;
}

/** What `band auth use` did. */
export function usedServerView(apiUrl: string, user: ProfileUser | undefined): string {
  return `band now uses ${apiUrl} by default (${user ? `logged in as ${user.name} <${user.email}>` : 'not logged in there yet: band auth login'})`;
}

/** Where to sign in when band cannot open a browser itself. */
export function openInBrowserView(purpose: string, address: string): string {
  return `open this address in a browser to ${purpose}: ${address}`;
}

export function profileView(me: Me): string {
  return [`Name:   ${me.name} <${me.email}>`, `Avatar: ${me.avatarUrl ?? 'none'}`].join('\n');
}

/** After a password change: the tokens it revoked, or the ones that still work and how to end them. */
export function passwordChangedView(out: Output, changed: PasswordChangeResult): string {
  const done = 'Password changed; your other sessions have ended';
  if (changed.revokedTokens > 0) return `${done}; revoked ${counted(changed.revokedTokens, 'personal access token')}`;
  if (changed.tokens.length === 0) return done;
  return [
    `${done}. These personal access tokens still work (band auth password --revoke-tokens ends them all, band token revoke one):`,
    tokenTable(out, changed.tokens, new Map()),
  ].join('\n');
}

export function accountDeletedView(email: string, apiUrl: string): string {
  return `Deleted the account ${email} on ${apiUrl}, and forgot its credentials`;
}

export function linkedView(me: Me, apiUrl: string): string {
  return `Linked your identity-provider account to ${me.name} <${me.email}> on ${apiUrl}: band auth login --web now signs in to it`;
}
