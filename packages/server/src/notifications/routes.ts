import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import { sendHtml } from '../core/html-page.js';
import { smallBody } from '../core/http.js';
import type { Routes } from '../core/routes.js';
import { NotificationsService } from './service.js';
import { renderUnknownLinkPage, renderUnsubscribedPage, renderUnsubscribePage, UNSUBSCRIBE_PAGE_CSP } from './unsubscribe-page.js';

/** The caller's email notification preferences, and the unsubscribe links of notification emails. */
@injectable()
export class NotificationsRoutes implements Feature {
  constructor(@inject(NotificationsService) private readonly notifications: NotificationsService) {}

  register(routes: Routes): void {
    routes.on(ROUTES.getNotificationPreferences, async ({ principal }) => this.notifications.get(principal));

    routes.on(ROUTES.updateNotificationPreferences, async ({ principal, body }) => this.notifications.update(principal, await body()));

    routes.on(ROUTES.unsubscribePage, async ({ req, res, params }) => {
      const kind = this.notifications.kindOf(params.token);
      if (kind === null) sendHtml(req, res, 400, renderUnknownLinkPage(), UNSUBSCRIBE_PAGE_CSP);
      else sendHtml(req, res, 200, renderUnsubscribePage(`/unsubscribe/${encodeURIComponent(params.token)}`, kind), UNSUBSCRIBE_PAGE_CSP);
    });

    // RFC 8058: a mail client posts `List-Unsubscribe=One-Click`; the page's button posts the same. Either way
    // the signed link alone decides, so the body is read (and bounded) but not required.
    routes.on(ROUTES.unsubscribe, async ({ req, res, params }) => {
      await smallBody(req);
      const kind = await this.notifications.unsubscribe(params.token);
      if (kind === null) sendHtml(req, res, 400, renderUnknownLinkPage(), UNSUBSCRIBE_PAGE_CSP);
      else sendHtml(req, res, 200, renderUnsubscribedPage(kind), UNSUBSCRIBE_PAGE_CSP);
    });
  }
}
