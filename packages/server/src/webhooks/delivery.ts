// Sends webhook deliveries (§19), one `webhook_delivery` job per attempt. The job claims its delivery (the
// oldest pending one of its endpoint: one at a time, in event order), POSTs the stored body with Standard
// Webhooks headers through an agent that refuses private addresses after DNS resolution, records the
// attempt and schedules what follows: a retry on the §19 schedule, the endpoint's next delivery, or the
// endpoint disabled. No database connection is held while the request runs.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { inject, injectable } from 'tsyringe';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { CLOCK, CONFIG, LOGGER, SIGNING_SECRET } from '../core/di.js';
import type { JobRun } from '../core/jobs.js';
import type { Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import { Notifier } from '../notifications/notifier.js';
import { SERVER_VERSION } from '../version.js';
import { chatBody } from './chat.js';
import { type AttemptOutcome, WebhooksRepository, type WebhookRow } from './repository.js';
import { openSecrets } from './secrets.js';
import { signatureHeader } from './signing.js';
import { deliveryAgents, schemeRefused } from './targets.js';

/** Seconds before each attempt after the first (§19): 10 attempts in about 3 days. */
const SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400];
const JITTER = 0.1;
const MAX_RETRY_AFTER_SECONDS = 86_400;
/** Failing this long (every attempt since) disables an endpoint. */
const FAILING_DISABLES_MS = 5 * 86_400_000;
const RESPONSE_KEPT_BYTES = 4096;

interface Answer {
  statusCode: number;
  retryAfter: string | undefined;
  body: string;
}

@injectable()
export class WebhookDeliverer {
  private readonly agents;

  constructor(
    @inject(WebhooksRepository) private readonly repository: WebhooksRepository,
    @inject(CONFIG) private readonly config: Config,
    @inject(SIGNING_SECRET) private readonly serverSecret: string,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(LOGGER) private readonly log: Logger,
    @inject(Metrics) private readonly metrics: Metrics,
    @inject(Notifier) private readonly notifier: Notifier,
  ) {
    this.agents = deliveryAgents(config.webhooks);
  }

  /** The `webhook_delivery` job's handler. */
  run = async (job: JobRun<{ webhookId: string; eventId: string }>): Promise<void> => {
    const { webhookId, eventId } = job.payload;
    const claimed = await this.repository.claim(webhookId, eventId, job.id, new Date(this.clock.now()));
    if (!claimed) return;
    const { deliveryId, body, webhook } = claimed;
    const startedAt = new Date(this.clock.now());
    const started = performance.now();
    let answer: Answer | null = null;
    let error: string | null = null;
    try {
      answer = await this.send(webhook, deliveryId, body, job.signal);
    } catch (thrown) {
      if (job.signal.aborted) throw thrown;
      error = thrown instanceof Error ? thrown.message : String(thrown);
    }
    const attempt = {
      at: startedAt,
      durationMs: Math.round(performance.now() - started),
      statusCode: answer?.statusCode ?? null,
      error,
      responseBody: answer?.body ?? '',
    };
    const made = (await this.repository.scheduledAttempts(deliveryId)) + 1;
    const outcome = this.outcome(webhook, answer, made, new Date(this.clock.now()));
    this.metrics.webhookDeliveries.inc({ outcome: outcome.kind });
    if (outcome.kind === 'disable') this.log.warn('webhook endpoint disabled', { webhookId, reason: outcome.reason });
    await this.repository.complete(webhookId, deliveryId, attempt, outcome, (tx, disabled, reason) => this.notifier.webhookDisabled(tx, disabled, reason));
  };

  private outcome(webhook: WebhookRow, answer: Answer | null, made: number, now: Date): AttemptOutcome {
    const status = answer?.statusCode ?? null;
    if (status !== null && status >= 200 && status < 300) return { kind: 'succeeded' };
    if (status === 410) return { kind: 'disable', reason: 'The endpoint answered 410 Gone' };
    const failingSince = webhook.failingSince ?? now;
    if (now.getTime() - failingSince.getTime() >= FAILING_DISABLES_MS) {
      return { kind: 'disable', reason: `Every delivery has failed since ${failingSince.toISOString()} (5 days)` };
    }
    if (made > SCHEDULE_SECONDS.length) return { kind: 'failed' };
    const retryAfter = (status === 429 || status === 503) && answer ? (retryAfterSeconds(answer.retryAfter, now) ?? bodyRetryAfter(answer.body)) : null;
    const seconds = retryAfter ?? SCHEDULE_SECONDS[made - 1]! * (1 + JITTER * (2 * Math.random() - 1));
    return { kind: 'retry', at: new Date(now.getTime() + seconds * 1000) };
  }

  /**
   * The headers and bytes of an attempt: a standard delivery signed (Standard Webhooks), a chat format's
   * message unsigned (the URL is its secret).
   */
  private request(webhook: WebhookRow, deliveryId: string, body: string): { headers: Record<string, string>; sent: string } {
    const common = { 'content-type': 'application/json', 'user-agent': `bandcollab-webhooks/${SERVER_VERSION}` };
    if (webhook.format !== 'standard') return { headers: common, sent: chatBody(webhook.format, body, this.config.appUrl) };
    // Seconds of the real time, which the receiver compares with its own clock.
    const timestamp = Math.floor(Date.now() / 1000);
    const secrets = openSecrets(this.serverSecret, webhook, new Date(this.clock.now()));
    return {
      headers: {
        ...common,
        'webhook-id': deliveryId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, deliveryId, timestamp, body),
      },
      sent: body,
    };
  }

  /** One POST: no redirect followed (node's http never follows one), the first 4 KiB of the answer kept. */
  private send(webhook: WebhookRow, deliveryId: string, body: string, signal: AbortSignal): Promise<Answer> {
    const refused = schemeRefused(webhook.url, this.config.webhooks);
    if (refused) return Promise.reject(new Error(`The URL is refused: ${refused}`));
    const { headers, sent } = this.request(webhook, deliveryId, body);
    const url = new URL(webhook.url);
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const agent = url.protocol === 'https:' ? this.agents.https : this.agents.http;
    const timeoutMs = this.config.webhooks.timeoutSeconds * 1000;
    return new Promise<Answer>((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) }, (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () =>
          resolve({
            statusCode: res.statusCode ?? 0,
            retryAfter: typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined,
            body: Buffer.concat(chunks).subarray(0, RESPONSE_KEPT_BYTES).toString('utf8'),
          });
        res.on('data', (chunk: Buffer) => {
          if (kept >= RESPONSE_KEPT_BYTES) return;
          chunks.push(chunk);
          kept += chunk.length;
          if (kept >= RESPONSE_KEPT_BYTES) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', reject);
      });
      req.on('error', (error) => reject(error.name === 'AbortError' && !signal.aborted ? new Error(`No answer within ${this.config.webhooks.timeoutSeconds} s`) : error));
      req.end(sent);
    });
  }
}

/** Retry-After in seconds or as an HTTP date, at most 24 h; null when absent or unreadable. */
function retryAfterSeconds(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value) : (Date.parse(value) - now.getTime()) / 1000;
  return Number.isFinite(seconds) ? Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(0, seconds)) : null;
}

/** Discord's 429 says how long to wait in its JSON body (`retry_after`, seconds), at most 24 h. */
function bodyRetryAfter(body: string): number | null {
  try {
    const seconds = (JSON.parse(body) as { retry_after?: unknown }).retry_after;
    return typeof seconds === 'number' && Number.isFinite(seconds) ? Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(0, seconds)) : null;
  } catch {
    return null;
  }
}
