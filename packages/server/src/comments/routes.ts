import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import type { RouteContext, Routes } from '../core/routes.js';
import { trashed } from '../trash/service.js';
import { CommentsService } from './service.js';
import { MarkerExports } from './exports.js';

/** Comments, their inboxes, reviews and marker exports (§14). */
@injectable()
export class CommentsRoutes implements Feature {
  constructor(
    @inject(CommentsService) private readonly comments: CommentsService,
    @inject(MarkerExports) private readonly exports: MarkerExports,
  ) {}

  register(routes: Routes): void {
    routes.on(ROUTES.listFileComments, async ({ principal, params, query }) => {
      return this.comments.listOfFile(principal, params.id, { ...query, since: query.since ?? null, cursor: query.cursor ?? null });
    });

    routes.on(ROUTES.exportComments, async ({ req, res, principal, params, query }) => {
      await this.exports.send(req, res, principal, params.id, query);
    });

    routes.on(ROUTES.createComment, async ({ principal, params, body }) => {
      const created = await this.comments.create(principal, params.id, await body());
      return { location: `/api/comments/${created.id}`, body: created };
    });

    routes.on(ROUTES.getComment, async ({ principal, params }) => this.comments.get(principal, params.id));
    routes.on(ROUTES.updateComment, async ({ principal, params, body }) => this.comments.update(principal, params.id, await body()));
    routes.on(ROUTES.resolveComment, async ({ principal, params }) => this.comments.setResolved(principal, params.id, true));
    routes.on(ROUTES.reopenComment, async ({ principal, params }) => this.comments.setResolved(principal, params.id, false));

    routes.on(ROUTES.deleteComment, async ({ principal, params }) => {
      const trashedUntil = await this.comments.delete(principal, params.id);
      return { id: params.id, deleted: true as const, ...trashed(trashedUntil) };
    });

    routes.on(ROUTES.listCutComments, async ({ principal, params, query }) => this.comments.listOfCut(principal, params.id, inboxRequest(query)));

    routes.on(ROUTES.listProjectComments, async ({ principal, params, query }) => this.comments.listOfProject(principal, params.id, inboxRequest(query)));

    routes.on(ROUTES.listReviews, async ({ principal, params }) => this.comments.reviews(principal, params.id));

    routes.on(ROUTES.putReview, async ({ principal, params, body }) => {
      const { state, note } = await body();
      return this.comments.review(principal, params.id, state, note ?? null);
    });

    routes.on(ROUTES.requestReviews, async ({ principal, params, body }) => {
      const requested = await this.comments.requestReviews(principal, params.id, (await body()).userIds);
      return { location: `/api/files/${params.id}`, body: requested };
    });

    routes.on(ROUTES.withdrawReview, async ({ principal, params }) => {
      await this.comments.withdrawReview(principal, params.id);
      return { fileId: params.id, userId: principal.userId, deleted: true as const };
    });
  }
}

/** The inbox query of a cut or a project (they declare the same one). */
function inboxRequest(query: RouteContext<typeof ROUTES.listCutComments>['query']) {
  return { status: query.status, since: query.since ?? null, limit: query.limit, cursor: query.cursor ?? null, mentionsMe: query.mentions === 'me' };
}
