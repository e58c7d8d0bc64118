import { pathOf, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { sendHtml } from '../core/html-page.js';
import { ProjectAccess } from '../core/project-access.js';
import { INVITE_PAGE_CSP, renderInviteNotFoundPage, renderInvitePage } from './page.js';
import { InvitationsService } from './service.js';

/** Invitation links: invite and revoke (project ADMIN), look at one, accept one, its page. */
@injectable()
export class InvitationsRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(InvitationsService) private readonly invitations: InvitationsService,
  ) {}

  register(routes: Routes): void {
    routes.on(ROUTES.invite, async ({ principal, params, body }) => {
      // Access before the body, as in ProjectsRoutes: a stranger gets 404 and a MEMBER 403 whatever they send.
      await this.access.require(principal, 'project', params.id, 'ADMIN');
      const result = await this.invitations.invite(principal, params.id, await body());
      return { location: pathOf(ROUTES.getProject, { id: params.id }), body: result };
    });

    routes.on(ROUTES.revokeInvitation, async ({ principal, params }) => {
      await this.invitations.revoke(principal, params.id, params.invitationId);
      return { id: params.invitationId, deleted: true };
    });

    routes.on(ROUTES.acceptInvitation, async ({ principal, body }) => this.invitations.accept(principal, (await body()).token));

    routes.on(ROUTES.viewInvitation, async ({ params }) => this.invitations.view(params.token));

    routes.on(ROUTES.invitePage, async ({ req, res, params }) => {
      try {
        const view = await this.invitations.view(params.token);
        sendHtml(req, res, 200, renderInvitePage(view, `${this.config.publicUrl}/invite/${params.token}`), INVITE_PAGE_CSP);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'NOT_FOUND')) throw error;
        sendHtml(req, res, 404, renderInviteNotFoundPage(), INVITE_PAGE_CSP);
      }
    });
  }
}
