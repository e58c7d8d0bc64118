import { pathOf, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { WebhooksService } from './service.js';

/** Webhook endpoints of projects and accounts, their secrets, tests and delivery logs (§19). */
@injectable()
export class WebhooksRoutes implements Feature {
  constructor(@inject(WebhooksService) private readonly webhooks: WebhooksService) {}

  /** GET before POST: a HEAD is answered only where a path's first route is a GET. */
  register(routes: Routes): void {
    routes.on(ROUTES.listProjectWebhooks, async ({ principal, params }) => this.webhooks.listOfProject(principal, params.id));
    routes.on(ROUTES.createProjectWebhook, async ({ principal, params, body }) => {
      const created = await this.webhooks.create(principal, params.id, await body());
      return { location: pathOf(ROUTES.getWebhook, { id: created.id }), body: created };
    });
    routes.on(ROUTES.listWebhooks, async ({ principal }) => this.webhooks.listOfAccount(principal));
    routes.on(ROUTES.createWebhook, async ({ principal, body }) => {
      const created = await this.webhooks.create(principal, null, await body());
      return { location: pathOf(ROUTES.getWebhook, { id: created.id }), body: created };
    });
    routes.on(ROUTES.getWebhook, async ({ principal, params }) => this.webhooks.get(principal, params.id));
    routes.on(ROUTES.updateWebhook, async ({ principal, params, body }) => this.webhooks.update(principal, params.id, await body()));
    routes.on(ROUTES.deleteWebhook, async ({ principal, params }) => {
      await this.webhooks.delete(principal, params.id);
      return { id: params.id, deleted: true };
    });
    routes.on(ROUTES.rotateWebhookSecret, async ({ principal, params }) => this.webhooks.rotateSecret(principal, params.id));
    routes.on(ROUTES.testWebhook, async ({ principal, params }) => this.webhooks.test(principal, params.id));
    routes.on(ROUTES.listWebhookDeliveries, async ({ principal, params, query }) =>
      this.webhooks.deliveries(principal, params.id, query),
    );
    routes.on(ROUTES.redeliverWebhook, async ({ principal, params }) => this.webhooks.redeliver(principal, params.id, params.deliveryId));
  }
}
