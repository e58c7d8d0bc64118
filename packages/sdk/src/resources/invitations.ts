import type { BandPromise } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import { type RequestOptions, type Transport } from '../transport.js';
import type { AcceptedInvitation, AcceptInvitationRequest, InvitationView } from '../types.js';

/** Invitation links: what one offers, and accepting it as the signed-in user. */
export class InvitationsResource {
  constructor(private readonly transport: Transport) {}

  /** What a link offers; needs no account. Takes the token or the whole invite URL. */
  get(tokenOrUrl: string, options?: RequestOptions): BandPromise<InvitationView> {
    return this.transport.call(ROUTES.viewInvitation, { params: { token: invitationToken(tokenOrUrl) } }, options);
  }

  /**
   * Joins the project as the signed-in user, whose email must be the invited one. Takes the token or the
   * whole invite URL; the token goes to this client's server only.
   */
  accept(tokenOrUrl: string, options?: RequestOptions): BandPromise<AcceptedInvitation> {
    const json: AcceptInvitationRequest = { token: invitationToken(tokenOrUrl) };
    return this.transport.call(ROUTES.acceptInvitation, { json }, options);
  }
}

/** `https://host/invite/<token>` (or the bare token) → the token: the last path segment. */
export function invitationToken(tokenOrUrl: string): string {
  const path = tokenOrUrl.trim().split(/[?#]/)[0]!.replace(/\/+$/, '');
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}
