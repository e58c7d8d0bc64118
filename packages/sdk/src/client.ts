import type { BandPromise } from './band-promise.js';
import { AdminResource } from './resources/admin.js';
import { AuthResource } from './resources/auth.js';
import { CommentsResource } from './resources/comments.js';
import { CutsResource } from './resources/cuts.js';
import { EventsResource } from './resources/events.js';
import { FilesResource } from './resources/files.js';
import { InvitationsResource } from './resources/invitations.js';
import { ProjectsResource } from './resources/projects.js';
import { NotificationsResource } from './resources/notifications.js';
import { ReviewsResource } from './resources/reviews.js';
import { SharesResource } from './resources/shares.js';
import { TokensResource } from './resources/tokens.js';
import { TrashResource } from './resources/trash.js';
import { WebhooksResource } from './resources/webhooks.js';
import { VibesResource } from './resources/vibes.js';
import type { Tokens } from './session.js';
import { ROUTES } from './contract/routes.js';
import { type RequestOptions, routeRequest, Transport, type TransportOptions } from './transport.js';
import type { Health } from './types.js';

export type BandClientOptions = TransportOptions;

/**
 * A client for one bandcollab server. It keeps the tokens: sign in with `auth.login` (or pass a saved
 * pair), persist new pairs from `onTokens`, and every call refreshes the access token when it must. Or
 * pass a personal access token (`token: 'bcp_…'`, for CI and scripts): it is sent as it is, never
 * refreshed; once revoked or expired every call fails with an error `isAuthError` recognises.
 */
export class BandClient {
  readonly auth: AuthResource;
  readonly projects: ProjectsResource;
  readonly invitations: InvitationsResource;
  readonly vibes: VibesResource;
  readonly cuts: CutsResource;
  readonly files: FilesResource;
  readonly shares: SharesResource;
  readonly events: EventsResource;
  /** Comments pinned to moments of a file version, their inboxes and marker exports. */
  readonly comments: CommentsResource;
  /** Approvals and change requests of a file version. */
  readonly reviews: ReviewsResource;
  /** What you are emailed about: mentions, replies, review requests, new versions, webhooks, the digest. */
  readonly notifications: NotificationsResource;
  /** Personal access tokens: create, list, delete (with a session). */
  readonly tokens: TokensResource;
  /** Webhook endpoints of a project (its ADMINs) or of your account, their secrets and delivery logs. */
  readonly webhooks: WebhooksResource;
  /** The trash: what deletes kept, to restore or purge. */
  readonly trash: TrashResource;
  /** Site administration (a site ADMIN only): storage by user or project, accounts and their deactivation. */
  readonly admin: AdminResource;
  private readonly transport: Transport;

  constructor(options: BandClientOptions) {
    this.transport = new Transport(options);
    this.auth = new AuthResource(this.transport);
    this.projects = new ProjectsResource(this.transport);
    this.invitations = new InvitationsResource(this.transport);
    this.vibes = new VibesResource(this.transport);
    this.cuts = new CutsResource(this.transport);
    this.files = new FilesResource(this.transport);
    this.shares = new SharesResource(this.transport);
    this.events = new EventsResource(this.transport);
    this.comments = new CommentsResource(this.transport);
    this.reviews = new ReviewsResource(this.transport);
    this.notifications = new NotificationsResource(this.transport);
    this.tokens = new TokensResource(this.transport);
    this.webhooks = new WebhooksResource(this.transport);
    this.trash = new TrashResource(this.transport);
    this.admin = new AdminResource(this.transport);
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** The current pair; both undefined when signed out (with a personal access token: it, and no refresh token). */
  get sessionTokens(): Tokens {
    return this.transport.tokens;
  }

  /**
   * An access token that is not about to expire, for use outside the client (a script, a curl): refreshed
   * first when it is due, as every call does. Undefined when signed out.
   */
  freshAccessToken(): Promise<string | undefined> {
    return this.transport.freshAccessToken();
  }

  /** Uses a saved pair (does not call onTokens); `setTokens({})` signs out locally. */
  setTokens(tokens: Partial<Tokens>): void {
    this.transport.setTokens(tokens);
  }

  /** The server's health and version; needs no account. */
  health(): BandPromise<Health> {
    return this.transport.call(ROUTES.health, {});
  }

  /** The server's OpenAPI 3.1 document; needs no account. */
  openApi(options?: RequestOptions): BandPromise<Record<string, unknown>> {
    return this.transport.json(routeRequest(ROUTES.openApi, {}), options);
  }

  /**
   * This instance's metrics in the Prometheus text format. `token` is the server's METRICS_TOKEN; from
   * loopback with METRICS_LOOPBACK on, none is needed.
   */
  async metrics(token?: string, options?: RequestOptions): Promise<string> {
    const headers = { ...options?.headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
    const response = await this.transport.open(ROUTES.metrics, {}, { ...options, headers });
    return response.body.text();
  }

  /** The server's API reference in Markdown (every endpoint, then every schema); needs no account. */
  async reference(options?: RequestOptions): Promise<string> {
    const response = await this.transport.open(ROUTES.reference, {}, options);
    return response.body.text();
  }
}
