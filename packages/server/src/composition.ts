import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { AFTER_ANALYSIS } from './analysis/worker.js';
import type { Clock } from './core/clock.js';
import type { Config } from './core/config.js';
import type { Database } from './core/database.js';
import { BLOB_STORE, CLOCK, CONFIG, LOCKS_SQL, LOGGER, SIGNING_SECRET, SQL } from './core/di.js';
import { JobsRepository } from './core/jobs-repository.js';
import type { Logger } from './core/logger.js';
import { Metrics } from './core/metrics.js';
import { Shutdown } from './core/shutdown.js';
import { Space } from './core/space.js';
import type { BlobStore } from './core/store/blob-store.js';
import { PreviewsRepository } from './previews/repository.js';
import { ProjectsRepository, toUpdatedProject } from './projects/repository.js';
import { IMAGE_OWNERS } from './trash/service.js';
import { toVibe, VibesRepository } from './vibes/repository.js';

/** What every piece is built from: the values opened before anything is wired. */
export interface Opened {
  config: Config;
  log: Logger;
  database: Database;
  clock: Clock;
  /**
   * Where stored bytes live. A command that reads none leaves it out: opening the local driver makes DATA_DIR's
   * directories, the S3 one needs the bucket.
   */
  store?: BlobStore;
  /** What access tokens are signed with: the server's (a command signs none, and must not create the secret). */
  signingSecret?: string;
}

/**
 * The one composition root, for the server (app.ts) and its commands (commands.ts) alike: the values are
 * registered here, and every class (repositories, services, routes) is resolved from it by its constructor, so
 * a new one is never wired by hand. Nothing is built until it is resolved: a command builds only what it uses.
 */
export function compose({ config, log, database, clock, store, signingSecret }: Opened): DependencyContainer {
  const container = rootContainer.createChildContainer();
  container.register(CONFIG, { useValue: config });
  container.register(LOGGER, { useValue: log });
  container.register(SQL, { useValue: database.sql });
  container.register(LOCKS_SQL, { useValue: database.locks });
  container.register(CLOCK, { useValue: clock });
  if (store !== undefined) container.register(BLOB_STORE, { useValue: store });
  if (signingSecret !== undefined) container.register(SIGNING_SECRET, { useValue: signingSecret });
  // One per process (a child container keeps its singletons): the metrics registry, the shutdown signal, and
  // the reservations of uploads in flight, which every endpoint that takes uploads must see.
  container.registerSingleton(Metrics);
  container.registerSingleton(Shutdown);
  container.registerSingleton(Space);
  container.register(JobsRepository, { useValue: new JobsRepository(database.sql) });
  // Lower features are handed what they may not import from the features above them.
  container.register(AFTER_ANALYSIS, { useToken: PreviewsRepository });
  container.register(IMAGE_OWNERS, {
    useFactory: (pieces) => {
      const projects = pieces.resolve(ProjectsRepository);
      const vibes = pieces.resolve(VibesRepository);
      return {
        project: async (tx, projectId, userId) => toUpdatedProject((await projects.findForUser(tx, projectId, userId))!),
        vibe: async (tx, vibeId) => toVibe((await vibes.find(tx, vibeId))!),
      };
    },
  });
  return container;
}
