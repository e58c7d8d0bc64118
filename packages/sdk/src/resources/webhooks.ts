import type { BandPromise } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import { type PagedList, pagedList } from '../paging.js';
import type { RequestOptions, Transport } from '../transport.js';
import type { CreatedWebhook, CreateWebhookRequest, Deleted, UpdateWebhookRequest, Webhook, WebhookDeliveriesQuery, WebhookDelivery, WebhookDeliveryPage } from '../types.js';

/**
 * Webhook endpoints (Standard Webhooks 1.0): a project's (managed by its ADMINs) or your account's (the events
 * of every project you belong to; with a session only). A secret is in the answer that makes it only; check
 * deliveries on the receiving side with `verifyWebhook`.
 */
export class WebhooksResource {
  constructor(private readonly transport: Transport) {}

  /** A new endpoint: of `projectId`, or of your account when it is null. */
  create(projectId: string | null, input: CreateWebhookRequest, options?: RequestOptions): BandPromise<CreatedWebhook> {
    return projectId === null
      ? this.transport.call(ROUTES.createWebhook, { json: input }, options)
      : this.transport.call(ROUTES.createProjectWebhook, { params: { id: projectId }, json: input }, options);
  }

  /** The endpoints of `projectId`, or of your account when it is null, oldest first. */
  list(projectId: string | null, options?: RequestOptions): BandPromise<Webhook[]> {
    return projectId === null
      ? this.transport.call(ROUTES.listWebhooks, {}, options)
      : this.transport.call(ROUTES.listProjectWebhooks, { params: { id: projectId } }, options);
  }

  get(id: string, options?: RequestOptions): BandPromise<Webhook> {
    return this.transport.call(ROUTES.getWebhook, { params: { id } }, options);
  }

  /** Changes url, events, enabled or description; `enabled: true` turns on an endpoint the server disabled. */
  update(id: string, change: UpdateWebhookRequest, options?: RequestOptions): BandPromise<Webhook> {
    return this.transport.call(ROUTES.updateWebhook, { params: { id }, json: change }, options);
  }

  delete(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteWebhook, { params: { id } }, options);
  }

  /** A new secret (in this answer only); the old one signs beside it for 24 hours. */
  rotateSecret(id: string, options?: RequestOptions): BandPromise<CreatedWebhook> {
    return this.transport.call(ROUTES.rotateWebhookSecret, { params: { id } }, options);
  }

  /** Queues a `webhook.test` delivery. */
  test(id: string, options?: RequestOptions): BandPromise<WebhookDelivery> {
    return this.transport.call(ROUTES.testWebhook, { params: { id } }, options);
  }

  /** One page of the deliveries of the last 30 days, newest first, each with every attempt; pass `nextCursor` on. */
  deliveries(id: string, filter: WebhookDeliveriesQuery = {}, options?: RequestOptions): BandPromise<WebhookDeliveryPage> {
    return this.transport.call(ROUTES.listWebhookDeliveries, { params: { id }, query: { status: filter.status, cursor: filter.cursor, limit: filter.limit } }, options);
  }

  /** Every delivery of the last 30 days, newest first: iterate it, each page fetched as iteration reaches it. */
  listDeliveries(id: string, filter: Omit<WebhookDeliveriesQuery, 'cursor'> = {}, options?: RequestOptions): PagedList<WebhookDelivery, WebhookDeliveryPage> {
    return pagedList((cursor) => this.deliveries(id, { ...filter, cursor }, options), (page) => page.deliveries);
  }

  /** A new attempt of a delivery now, with the same webhook-id. */
  redeliver(id: string, deliveryId: string, options?: RequestOptions): BandPromise<WebhookDelivery> {
    return this.transport.call(ROUTES.redeliverWebhook, { params: { id, deliveryId } }, options);
  }
}
