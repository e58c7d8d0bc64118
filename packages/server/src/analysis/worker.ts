// The analysis queue's consumer: ANALYSIS_CONCURRENCY loops per server instance, each taking the oldest job
// no other instance holds (analysis/repository.ts), analysing the file in the loop's worker thread (./isolated.ts)
// while it holds the job's lock, and storing the result, removing the job and publishing `file.analyzed` in
// that same transaction. A stop or a crash rolls the transaction back, so the job stays queued for the next
// start (or another instance). A job that fails otherwise is tried again later, MAX_ATTEMPTS times at most.
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { inject, injectable } from 'tsyringe';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Sql, Tx } from '../core/database.js';
import { CLOCK, CONFIG, LOGGER, SQL } from '../core/di.js';
import { storeKeys } from '../core/store/index.js';
import type { Logger } from '../core/logger.js';
import { Space } from '../core/space.js';
import { EventPublisher } from '../events/publisher.js';
import { AnalysisThread } from './isolated.js';
import { type AnalysisResult, AnalysisRepository, type TakenJob } from './repository.js';

/** How long an idle loop waits before it looks at the queue again (jobs of other instances included). */
const IDLE_POLL_MS = 1000;
/** Attempts at one job before its file is `failed`; a database blip (a restart, a failover) costs one or two. */
const MAX_ATTEMPTS = 3;
/** The wait before a failed job's next attempt: a database restart or failover is over by then. */
const RETRY_DELAY_MS = 30_000;

@injectable()
export class AnalysisWorker {
  private readonly controller = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(SQL) private readonly sql: Sql,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(AnalysisRepository) private readonly repository: AnalysisRepository,
    @inject(Space) private readonly space: Space,
  ) {}

  start(): void {
    for (let i = 0; i < this.config.analysisConcurrency; i += 1) this.loops.push(this.loop());
  }

  /** Abandons the analyses in progress (their jobs stay queued) and waits for the loops to end. */
  async stop(): Promise<void> {
    this.controller.abort();
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    const { signal } = this.controller;
    const thread = new AnalysisThread({ storage: this.config.storage, dataDir: this.config.dataDir });
    while (!signal.aborted) {
      let worked = false;
      try {
        worked = await this.next(thread, signal);
      } catch (error) {
        // Stopped mid-analysis, or the database is away: the job stays queued either way.
        if (!signal.aborted) this.log.warn('analysis queue: a job could not be completed; it stays queued', { error });
      }
      if (!worked) await delay(IDLE_POLL_MS, undefined, { signal }).catch(() => undefined);
    }
    await thread.close();
  }

  /** Takes and completes one job; false when the queue had none free. */
  private async next(thread: AnalysisThread, signal: AbortSignal): Promise<boolean> {
    let taken: TakenJob | null = null;
    try {
      return await this.sql.begin(async (tx) => {
        const job = await this.repository.take(tx, new Date(this.clock.now()));
        if (!job) return false;
        taken = job;
        if (!job.file) {
          await this.repository.drop(tx, job.fileId);
          return true;
        }
        await this.complete(tx, job, await this.analyse(thread, job.fileId, job.file, signal));
        return true;
      });
    } catch (error) {
      if (signal.aborted || !taken) throw error;
      await this.countFailure(taken, error);
      return true;
    }
  }

  /** Stores the result and removes the job. Nobody acted: `file.analyzed` names the uploader. */
  private async complete(tx: Tx, job: TakenJob, result: AnalysisResult): Promise<void> {
    const { projectId, cutId, uploader } = job.file!;
    // A deleted account's file is analysed all the same, without an event (an event needs an actor).
    if ((await this.repository.finish(tx, job.fileId, result)) && uploader) {
      await this.events.publish(tx, {
        type: 'file.analyzed',
        projectId,
        actor: uploader,
        data: { fileId: job.fileId, cutId, analysis: result.analysis },
      });
    }
  }

  /**
   * A job whose analysis or result storing failed: tried again later, unless that was its last attempt or
   * the database refused the result itself (trying again would give the same answer); then its file is
   * `failed`, so one file never holds the queue.
   */
  private async countFailure(job: TakenJob, error: unknown): Promise<void> {
    const refused = refusedByDatabase(error);
    await this.sql.begin(async (tx) => {
      const attempts = await this.repository.countFailure(tx, job.fileId, new Date(this.clock.now() + RETRY_DELAY_MS));
      if (attempts === null) return;
      if (!refused && attempts < MAX_ATTEMPTS) {
        this.log.warn('analysis queue: a job failed; it is tried again later', { fileId: job.fileId, attempts, error });
        return;
      }
      this.log.error('analysis queue: a job failed for good; its file is marked failed', { fileId: job.fileId, attempts, error });
      await this.complete(tx, job, { analysis: 'failed', audio: null, stems: null, peaks: null });
    });
  }

  private async analyse(thread: AnalysisThread, fileId: string, file: NonNullable<TakenJob['file']>, signal: AbortSignal): Promise<AnalysisResult> {
    const none = { audio: null, stems: null, peaks: null };
    if (file.type !== 'CUT' && file.type !== 'STEM') return { ...none, analysis: 'unsupported' };
    const outcome = await thread.analyze(
      { key: storeKeys.file(fileId, file.extension), type: file.type, extension: file.extension },
      { timeoutMs: this.config.analysisTimeoutSeconds * 1000, uploading: () => this.space.uploading, signal },
    );
    switch (outcome.status) {
      case 'audio':
        return { ...none, analysis: 'done', audio: outcome.audio, peaks: outcome.peaks };
      case 'stems':
        return { ...none, analysis: 'done', stems: outcome.stems };
      case 'unsupported':
        return { ...none, analysis: 'unsupported' };
      case 'failed':
        this.log.info('analysis failed', { fileId, reason: outcome.reason });
        return { ...none, analysis: 'failed' };
      case 'unreadable':
        // Nothing to analyse (deleted meanwhile, a disk error), and retrying a missing file would hold the queue.
        this.log.error('analysis could not read the stored file', { fileId, reason: outcome.reason });
        return { ...none, analysis: 'failed' };
    }
  }
}

/**
 * The database refused the data (a data exception, class 22, or a limit, class 54): the same result would
 * be refused again. Connection trouble and the rest may pass.
 */
function refusedByDatabase(error: unknown): boolean {
  return error instanceof postgres.PostgresError && (error.code.startsWith('22') || error.code.startsWith('54'));
}
