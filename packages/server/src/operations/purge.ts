import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import { CONFIG, LOGGER } from '../core/di.js';
import { Idempotency } from '../core/idempotency.js';
import { SIGN_IN_NETWORK_DAYS } from '../core/networks.js';
import type { Logger } from '../core/logger.js';
import { FilesService } from '../files/service.js';
import { TokensRepository } from '../tokens/repository.js';
import { UploadsService } from '../uploads/service.js';
import { OperationsRepository } from './repository.js';

/**
 * Expired personal access tokens are kept this long after they expire, then deleted: for a while, whoever
 * traces a script's 401s can still find in the database which token it presented (by its hint) and when it ran out.
 */
const EXPIRED_TOKEN_RETENTION_SECONDS = 30 * 24 * 60 * 60;

/**
 * Deletes expired rows (and the bytes of expired resumable uploads, personal access tokens 30 days after
 * they expired, and Idempotency-Keys a day old) and the leftovers of failed or interrupted storing
 * (FilesService.removeLeftovers) once at start, then every PURGE_INTERVAL_SECONDS until stopped. Every instance
 * runs it; each step acts on database rows or on bytes old enough to be nobody's work in flight.
 */
@injectable()
export class ExpiredRowsPurge {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(OperationsRepository) private readonly repository: OperationsRepository,
    @inject(UploadsService) private readonly uploads: UploadsService,
    @inject(FilesService) private readonly files: FilesService,
    @inject(TokensRepository) private readonly tokens: TokensRepository,
    @inject(Idempotency) private readonly idempotency: Idempotency,
  ) {}

  async start(): Promise<void> {
    this.running = this.purge();
    await this.running;
    this.schedule();
  }

  /** Stops the schedule and waits for a purge in progress, so the database can close after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.purge().then(() => this.schedule());
    }, this.config.purgeIntervalSeconds * 1000);
    // A pending purge alone does not keep the process alive.
    this.timer.unref();
  }

  private async purge(): Promise<void> {
    try {
      const deleted = await this.repository.purgeExpired({
        loginSeconds: this.config.loginWindowSeconds,
        registrationSeconds: this.config.registerWindowSeconds,
        signInNetworkDays: SIGN_IN_NETWORK_DAYS,
      });
      const resumableUploads = await this.uploads.purgeExpired();
      const personalAccessTokens = await this.tokens.deleteExpired(EXPIRED_TOKEN_RETENTION_SECONDS);
      const idempotencyKeys = await this.idempotency.purgeExpired();
      const leftovers = await this.files.removeLeftovers();
      const counts = { ...deleted, resumableUploads, personalAccessTokens, idempotencyKeys, ...leftovers };
      if (Object.values(counts).some((count) => count > 0)) this.log.info('expired rows purged', counts);
    } catch (error) {
      // The database may be briefly away: the next round tries again.
      this.log.warn('purge of expired rows failed', { error });
    }
  }
}
