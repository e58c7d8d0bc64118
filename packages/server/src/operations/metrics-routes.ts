import { createHash, timingSafeEqual } from 'node:crypto';
import { statfs } from 'node:fs/promises';
import type { Server } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import { bearerToken } from '../core/auth-guard.js';
import { clientAddress } from '../core/http.js';
import { JobsRepository } from '../core/jobs-repository.js';
import { Metrics } from '../core/metrics.js';
import type { Routes } from '../core/routes.js';
import { EventHub } from '../events/hub.js';
import { StorageRepository } from '../storage/repository.js';

/** The share of USER_QUOTA_MB past which an account counts as near its quota. */
const NEAR_QUOTA = 0.9;

const digest = (value: string) => createHash('sha256').update(value).digest();

/** 127.0.0.0/8 and ::1; Node's BlockList also matches IPv4-mapped IPv6 (`::ffff:127.0.0.1`). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const isLoopback = (address: string) => {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? 'ipv6' : 'ipv4');
};

/**
 * GET /metrics (§22): off unless METRICS_TOKEN (a Bearer token) or METRICS_LOOPBACK (loopback clients) opens
 * it. Off, or from an address it is not open to, it is the 404 of a path no route answers; a wrong or missing
 * token is 401 only when a token is set.
 */
@injectable()
export class MetricsRoutes implements Feature {
  private readonly tokenDigest: Buffer | null;

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(Metrics) private readonly metrics: Metrics,
    @inject(JobsRepository) private readonly jobs: JobsRepository,
    @inject(StorageRepository) private readonly storage: StorageRepository,
    @inject(EventHub) private readonly hub: EventHub,
  ) {
    this.tokenDigest = config.metrics.token === null ? null : digest(config.metrics.token);
  }

  register(routes: Routes): void {
    routes.on(ROUTES.metrics, async ({ req, res }) => {
      const { loopback } = this.config.metrics;
      const sent = bearerToken(req);
      // Digests compared in constant time: the token's length and bytes leak nothing through timing.
      const tokenMatches = this.tokenDigest !== null && sent !== undefined && timingSafeEqual(digest(sent), this.tokenDigest);
      if (!tokenMatches && !(loopback && isLoopback(clientAddress(req, this.config.trustProxy)))) {
        if (this.tokenDigest !== null) throw new DomainError('UNAUTHENTICATED', 'GET /metrics takes the METRICS_TOKEN as a Bearer token');
        throw new DomainError('NOT_FOUND', 'No route for GET /metrics');
      }
      const body = await this.metrics.registry.metrics();
      res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
      res.end(body);
    });
  }

  async start(server: Server): Promise<void> {
    const quota = this.config.userQuotaBytes;
    this.metrics.observe({
      jobs: () => this.jobs.summary(),
      stored: async () => (await this.storage.usageByType(null)).map(({ type, size, count }) => ({ type, bytes: size, count })),
      nearQuota: quota === null ? null : () => this.storage.usersNearQuota(Math.floor(quota * NEAR_QUOTA)),
      disk: async () => {
        const stats = await statfs(this.config.dataDir);
        return { sizeBytes: stats.blocks * stats.bsize, freeBytes: stats.bavail * stats.bsize };
      },
      connections: () => new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count)))),
      sockets: () => this.hub.socketCount,
    });
  }
}
