import { acceptInvitationRequest, inviteRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { sendHtml } from '../core/html-page.js';
import { idParam, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { ProjectAccess } from '../core/project-access.js';
import { INVITE_PAGE_CSP, renderInviteNotFoundPage, renderInvitePage } from './page.js';
import { InvitationsService } from './service.js';

/** Invitation links: invite and revoke (project ADMIN), look at one, accept one, its page. */
@injectable()
export class InvitationsRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(InvitationsService) private readonly invitations: InvitationsService,
  ) {}

  register({ app }: Routes): void {
    app.post('/api/projects/:id/invite', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'id', 'Project');
      // Access before the body, as in ProjectsRoutes: a stranger gets 404 and a MEMBER 403 whatever they send.
      await this.access.require(principal, 'project', projectId, 'ADMIN');
      const input = await jsonBody(req, res, inviteRequest);
      const result = await this.invitations.invite(principal, projectId, input);
      sendCreated(res, `/api/projects/${projectId}`, result);
    });

    app.delete('/api/projects/:id/invitations/:invitationId', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'id', 'Project');
      const invitationId = idParam(req, 'invitationId', 'Invitation');
      await this.invitations.revoke(principal, projectId, invitationId);
      sendJson(res, 200, { id: invitationId, deleted: true });
    });

    app.post('/api/invitations/accept', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const { token } = await jsonBody(req, res, acceptInvitationRequest);
      sendJson(res, 200, await this.invitations.accept(principal, token));
    });

    app.get('/api/invitations/:token', async (req, res) => {
      sendJson(res, 200, await this.invitations.view(req.params.token ?? ''));
    });

    app.get('/invite/:token', async (req, res) => {
      const token = req.params.token ?? '';
      try {
        const view = await this.invitations.view(token);
        sendHtml(req, res, 200, renderInvitePage(view, `${this.config.publicUrl}/invite/${token}`), INVITE_PAGE_CSP);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'NOT_FOUND')) throw error;
        sendHtml(req, res, 404, renderInviteNotFoundPage(), INVITE_PAGE_CSP);
      }
    });
  }
}
