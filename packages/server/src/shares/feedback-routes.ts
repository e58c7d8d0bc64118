import { pathOf, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { CommentsService } from '../comments/service.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import type { Feature } from '../core/feature.js';
import { clientAddress } from '../core/http.js';
import { addressKey } from '../core/networks.js';
import type { Routes } from '../core/routes.js';
import { SHARE_PAGE_SCRIPT } from './page-script.js';
import { SharesService } from './service.js';

/** Feedback links (§14): guests read and leave comments through a file link made with allowComments; the share page's script. */
@injectable()
export class FeedbackRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(SharesService) private readonly shares: SharesService,
    @inject(CommentsService) private readonly comments: CommentsService,
  ) {}

  register(routes: Routes): void {
    routes.on(ROUTES.sharedComments, async ({ params, query }) => {
      const link = await this.shares.feedbackLink(params.token);
      return this.comments.listOfFeedbackLink(link, { ...query, since: query.since ?? null, cursor: query.cursor ?? null });
    });

    routes.on(ROUTES.createSharedComment, async ({ req, params, body }) => {
      // The link before the body: a wrong link is 404 whatever it sends.
      const link = await this.shares.feedbackLink(params.token);
      // Per address, an IPv6 client by its /64 (which one host picks its addresses from).
      const created = await this.comments.createGuest(link, addressKey(clientAddress(req, this.config.trustProxy)), await body());
      return { location: pathOf(ROUTES.getComment, { id: created.id }), body: created };
    });

    routes.on(ROUTES.sharePageScript, async ({ res }) => {
      res.writeHead(200, {
        'Content-Type': 'text/javascript; charset=utf-8',
        'Content-Length': Buffer.byteLength(SHARE_PAGE_SCRIPT),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'public, max-age=300',
      });
      res.end(SHARE_PAGE_SCRIPT);
    });
  }
}
