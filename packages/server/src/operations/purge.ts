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
 * Deletes expired rows (personal access tokens 30 days after they expired, Idempotency-Keys a day old) and
 * the leftovers of failed or interrupted storing (FilesService.removeLeftovers), and expired resumable
 * uploads with their bytes: once as an instance starts, then as the recurring jobs `expired_rows_purge` and
 * `upload_purge` (every PURGE_INTERVAL_SECONDS, one instance per run). Each step acts on database rows or on
 * bytes old enough to be nobody's work in flight.
 */
@injectable()
export class ExpiredRowsPurge {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(OperationsRepository) private readonly repository: OperationsRepository,
    @inject(UploadsService) private readonly uploads: UploadsService,
    @inject(FilesService) private readonly files: FilesService,
    @inject(TokensRepository) private readonly tokens: TokensRepository,
    @inject(Idempotency) private readonly idempotency: Idempotency,
  ) {}

  /** The purge at start; a failure is logged (the database may be briefly away), and the recurring jobs try again. */
  async atStart(): Promise<void> {
    try {
      await this.purgeRows();
      await this.purgeUploads();
    } catch (error) {
      this.log.warn('purge of expired rows failed', { error });
    }
  }

  /** The `expired_rows_purge` job. */
  readonly purgeRows = async (): Promise<void> => {
    const deleted = await this.repository.purgeExpired({
      loginSeconds: this.config.loginWindowSeconds,
      registrationSeconds: this.config.registerWindowSeconds,
      signInNetworkDays: SIGN_IN_NETWORK_DAYS,
    });
    const personalAccessTokens = await this.tokens.deleteExpired(EXPIRED_TOKEN_RETENTION_SECONDS);
    const idempotencyKeys = await this.idempotency.purgeExpired();
    const leftovers = await this.files.removeLeftovers();
    this.report({ ...deleted, personalAccessTokens, idempotencyKeys, ...leftovers });
  };

  /** The `upload_purge` job. */
  readonly purgeUploads = async (): Promise<void> => {
    this.report({ resumableUploads: await this.uploads.purgeExpired() });
  };

  private report(counts: Record<string, number>): void {
    if (Object.values(counts).some((count) => count > 0)) this.log.info('expired rows purged', counts);
  }
}
