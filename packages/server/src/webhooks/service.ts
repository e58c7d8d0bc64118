import { randomUUID } from 'node:crypto';
import type { CreatedWebhook, CreateWebhookRequest, UpdateWebhookRequest, Webhook, WebhookDelivery, WebhookDeliveryPage } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { CLOCK, CONFIG, SIGNING_SECRET } from '../core/di.js';
import { DomainError, notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import { type DeliveriesFilter, type DeliveryRow, WebhooksRepository, type WebhookRow } from './repository.js';
import { sealSecret } from './secrets.js';
import { generateWebhookSecret } from './signing.js';
import { refusedTarget } from './targets.js';

/** Endpoints per project and per account (§19). */
export const MAX_WEBHOOKS = 20;
/** After a rotation the previous secret signs beside the new one this long. */
const ROTATION_OVERLAP_MS = 24 * 3600_000;
const LIMIT_RETRY_SECONDS = 60;

/**
 * Webhook endpoints (§19): a project's, managed by its ADMINs, and an account's own (the events of every
 * project its owner belongs to). Secrets are shown when made, stored sealed so deliveries can be signed.
 */
@injectable()
export class WebhooksService {
  constructor(
    @inject(WebhooksRepository) private readonly webhooks: WebhooksRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(CONFIG) private readonly config: Config,
    @inject(SIGNING_SECRET) private readonly serverSecret: string,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** `projectId` null: an endpoint of the caller's account. */
  async create(principal: Principal, projectId: string | null, input: CreateWebhookRequest): Promise<CreatedWebhook> {
    if (projectId) await this.access.require(principal, 'project', projectId, 'ADMIN');
    await this.checkUrl(input.url);
    const id = randomUUID();
    const secret = generateWebhookSecret();
    const row = await this.webhooks.insertWithin(MAX_WEBHOOKS, {
      id,
      projectId,
      userId: projectId ? null : principal.userId,
      url: input.url,
      events: [...new Set(input.events)],
      format: input.format ?? 'standard',
      description: input.description || null,
      secret: sealSecret(this.serverSecret, id, secret),
    });
    if (!row) {
      throw new DomainError('RATE_LIMITED', `At most ${MAX_WEBHOOKS} webhook endpoints per ${projectId ? 'project' : 'account'}: remove one first`, {
        retryAfterSeconds: LIMIT_RETRY_SECONDS,
      });
    }
    return { ...this.toWebhook(row), secret };
  }

  async listOfProject(principal: Principal, projectId: string): Promise<Webhook[]> {
    await this.access.require(principal, 'project', projectId, 'ADMIN');
    return (await this.webhooks.listOfProject(projectId)).map((row) => this.toWebhook(row));
  }

  async listOfAccount(principal: Principal): Promise<Webhook[]> {
    return (await this.webhooks.listOfAccount(principal.userId)).map((row) => this.toWebhook(row));
  }

  async get(principal: Principal, id: string): Promise<Webhook> {
    return this.toWebhook(await this.reachable(principal, id));
  }

  async update(principal: Principal, id: string, change: UpdateWebhookRequest): Promise<Webhook> {
    await this.reachable(principal, id);
    if (change.url !== undefined) await this.checkUrl(change.url);
    const updated = await this.webhooks.update(
      id,
      {
        ...(change.url !== undefined ? { url: change.url } : {}),
        ...(change.events !== undefined ? { events: [...new Set(change.events)] } : {}),
        ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
        ...(change.description !== undefined ? { description: change.description || null } : {}),
      },
      this.now(),
    );
    if (!updated) throw notFound('Webhook');
    return this.toWebhook(updated);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.reachable(principal, id);
    if (!(await this.webhooks.delete(id))) throw notFound('Webhook');
  }

  /** A new secret, shown in this answer only; the current one signs beside it for 24 hours (an older one stops now). */
  async rotateSecret(principal: Principal, id: string): Promise<CreatedWebhook> {
    const current = await this.reachable(principal, id);
    const secret = generateWebhookSecret();
    const rotated = await this.webhooks.rotateSecret(id, sealSecret(this.serverSecret, id, secret), current.secret, new Date(this.now().getTime() + ROTATION_OVERLAP_MS));
    if (!rotated) throw notFound('Webhook');
    return { ...this.toWebhook(rotated), secret };
  }

  async test(principal: Principal, id: string): Promise<WebhookDelivery> {
    const webhook = await this.reachable(principal, id);
    const eventId = randomUUID();
    const at = this.now().toISOString();
    const body = JSON.stringify({ type: 'webhook.test', timestamp: at, data: { id: eventId, webhookId: webhook.id, projectId: webhook.projectId, at } });
    const deliveryId = await this.webhooks.insertDelivery(id, eventId, 'webhook.test', body, this.now());
    return this.delivery(id, deliveryId);
  }

  async deliveries(principal: Principal, id: string, filter: DeliveriesFilter): Promise<WebhookDeliveryPage> {
    await this.reachable(principal, id);
    const page = await this.webhooks.deliveries(id, filter);
    return { deliveries: page.deliveries.map(toDelivery), nextCursor: page.nextCursor };
  }

  async redeliver(principal: Principal, id: string, deliveryId: string): Promise<WebhookDelivery> {
    await this.reachable(principal, id);
    if (!(await this.webhooks.redeliver(id, deliveryId, this.now()))) throw notFound('Delivery');
    return this.delivery(id, deliveryId);
  }

  private async delivery(webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    const row = await this.webhooks.findDelivery(webhookId, deliveryId);
    if (!row) throw notFound('Delivery');
    return toDelivery(row);
  }

  private now(): Date {
    return new Date(this.clock.now());
  }

  private toWebhook(row: WebhookRow): Webhook {
    return toWebhook(row, this.now());
  }

  /**
   * The endpoint, when the caller manages it: an ADMIN of its project (a MEMBER: 403), or the owner of an
   * account endpoint reached with a session. Anyone else: 404, as an unknown id.
   */
  private async reachable(principal: Principal, id: string): Promise<WebhookRow> {
    const webhook = await this.webhooks.find(id);
    if (!webhook) throw notFound('Webhook');
    if (webhook.projectId === null) {
      if (webhook.userId !== principal.userId || principal.token) throw notFound('Webhook');
      return webhook;
    }
    try {
      await this.access.require(principal, 'project', webhook.projectId, 'ADMIN');
    } catch (error) {
      throw error instanceof DomainError && error.code === 'NOT_FOUND' ? notFound('Webhook') : error;
    }
    return webhook;
  }

  private async checkUrl(url: string): Promise<void> {
    const refused = await refusedTarget(url, this.config.webhooks);
    if (refused) throw new DomainError('VALIDATION_FAILED', `The webhook URL is refused: ${refused}`);
  }
}

function toWebhook(row: WebhookRow, now: Date): Webhook {
  return {
    id: row.id,
    projectId: row.projectId,
    url: row.url,
    events: row.events,
    format: row.format,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt.toISOString(),
    secretOverlapUntil: row.previousSecretUntil && row.previousSecretUntil > now ? row.previousSecretUntil.toISOString() : null,
  };
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.eventId,
    type: row.type,
    status: row.status,
    attempts: row.attempts.map((attempt) => ({ ...attempt, at: new Date(attempt.at).toISOString() })),
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}
