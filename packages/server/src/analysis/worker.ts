// The analysis queue's consumer: ANALYSIS_CONCURRENCY loops per server instance, each taking the oldest job
// no other instance holds (analysis/repository.ts), analysing the file while it holds the job's lock, and
// storing the result, removing the job and publishing `file.analyzed` in that same transaction. A stop or a
// crash rolls the transaction back, so the job stays queued for the next start (or another instance).
import { setTimeout as delay } from 'node:timers/promises';
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CONFIG, LOGGER, SQL } from '../core/di.js';
import { Disk } from '../core/disk.js';
import type { Logger } from '../core/logger.js';
import { Space } from '../core/space.js';
import { EventPublisher } from '../events/publisher.js';
import { analyzeAudio } from './analyze.js';
import { type AnalysisResult, AnalysisRepository, type TakenJob } from './repository.js';
import { analyzeStems } from './stems.js';

/** How long an idle loop waits before it looks at the queue again (jobs of other instances included). */
const IDLE_POLL_MS = 1000;
/**
 * The analysis runs on the server's thread. While an upload streams in, it takes at most a fifth of the
 * thread: after every BURST_MS of decoding it rests four times as long as it worked.
 */
const BURST_MS = 10;
const REST_PER_WORK = 4;

@injectable()
export class AnalysisWorker {
  private readonly controller = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(SQL) private readonly sql: Sql,
    @inject(Disk) private readonly disk: Disk,
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
    while (!signal.aborted) {
      let worked = false;
      try {
        worked = await this.next(signal);
      } catch (error) {
        // Stopped mid-analysis, or the database is briefly away: the job stays queued either way.
        if (!signal.aborted) this.log.warn('analysis queue: a job could not be completed; it stays queued', { error });
      }
      if (!worked) await delay(IDLE_POLL_MS, undefined, { signal }).catch(() => undefined);
    }
  }

  /** Takes and completes one job; false when the queue had none free. */
  private next(signal: AbortSignal): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const job = await this.repository.take(tx);
      if (!job) return false;
      if (!job.file) {
        await this.repository.drop(tx, job.fileId);
        return true;
      }
      const result = await this.analyse(job.fileId, job.file, signal);
      const { projectId, cutId, uploader } = job.file;
      // Nobody acted: the event names the uploader, whose upload it completes. A deleted account's file is
      // analysed all the same, without an event (an event needs an actor).
      if ((await this.repository.finish(tx, job.fileId, result)) && uploader) {
        await this.events.publish(tx, {
          type: 'file.analyzed',
          projectId,
          actor: uploader,
          data: { fileId: job.fileId, cutId, analysis: result.analysis },
        });
      }
      return true;
    });
  }

  /** The pace of one analysis: full speed alone, a fifth of the thread while uploads stream in. */
  private pacer(): () => Promise<void> {
    let since = performance.now();
    return async () => {
      const worked = performance.now() - since;
      if (worked < BURST_MS) return;
      if (this.space.uploading) await delay(worked * REST_PER_WORK);
      since = performance.now();
    };
  }

  private async analyse(fileId: string, file: NonNullable<TakenJob['file']>, signal: AbortSignal): Promise<AnalysisResult> {
    const path = this.disk.filePath(fileId, file.extension);
    const none = { audio: null, stems: null, peaks: null };
    try {
      if (file.type === 'STEM') {
        const analysed = await analyzeStems(path, signal);
        if (analysed.status === 'done') return { ...none, analysis: 'done', stems: analysed.stems };
        this.log.info('analysis failed', { fileId, reason: analysed.reason });
        return { ...none, analysis: 'failed' };
      }
      const analysed = await analyzeAudio(path, file.extension, { signal, pace: this.pacer() });
      if (analysed.status === 'done') return { analysis: 'done', audio: analysed.audio, stems: null, peaks: analysed.peaks };
      if (analysed.status === 'unsupported') return { ...none, analysis: 'unsupported' };
      this.log.info('analysis failed', { fileId, reason: analysed.reason });
      return { ...none, analysis: 'failed' };
    } catch (error) {
      if (signal.aborted) throw error;
      // The stored bytes cannot be read (deleted meanwhile, a disk error): nothing to analyse, and retrying
      // a missing file would hold the queue forever.
      this.log.error('analysis could not read the stored file', { fileId, error });
      return { ...none, analysis: 'failed' };
    }
  }
}
