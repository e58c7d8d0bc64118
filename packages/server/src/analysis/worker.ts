// The analysis jobs' handler (core/jobs.ts runs it, JOBS_CONCURRENCY_ANALYSIS at once per instance): it reads
// the file's row, analyses the stored bytes in a worker thread of its own (./isolated.ts) holding no database
// connection, then stores the result and publishes `file.analyzed` in one transaction. A stop abandons the
// analysis (the queue queues its job again); a job that fails otherwise is retried by the queue, and on its
// last attempt, or at once when the database refuses the result itself, its file is `failed`.
import postgres from 'postgres';
import { inject, injectable, type InjectionToken } from 'tsyringe';
import type { Config } from '../core/config.js';
import type { Sql, Tx } from '../core/database.js';
import { CONFIG, LOGGER, SQL } from '../core/di.js';
import type { JobRun } from '../core/jobs.js';
import type { Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import { Space } from '../core/space.js';
import { storeKeys } from '../core/store/index.js';
import { EventPublisher } from '../events/publisher.js';
import { AnalysisThread, analysisBudgetSeconds } from './isolated.js';
import { type AnalysisResult, AnalysisRepository, type FileToAnalyse } from './repository.js';

const FAILED: AnalysisResult = { analysis: 'failed', audio: null, stems: null, peaks: null };

/**
 * What follows an analysis: the listening previews (§20) of a CUT, which need the duration measured here, and
 * of a STEM ZIP's audio entries (PREVIEW_STEMS), which need its entry list. The previews feature stands above
 * the analysis (its jobs run in the analysis thread), so the composition root passes it in. Both run in the
 * transaction that stores the analysis.
 */
export interface AfterAnalysis {
  /** `analysis` is how the CUT's analysis ended. */
  cutAnalysed(tx: Tx, fileId: string, uploadedBy: string | null, analysis: AnalysisResult['analysis']): Promise<void>;
  /** A STEM ZIP analysed with its entries listed, PREVIEW_STEMS on. */
  stemsAnalysed(tx: Tx, fileId: string, uploadedBy: string | null): Promise<void>;
}
export const AFTER_ANALYSIS: InjectionToken<AfterAnalysis> = Symbol('AfterAnalysis');

@injectable()
export class AnalysisJobs {
  /** Threads not analysing now: one per job running at once, kept from one file to the next. */
  private readonly idle: AnalysisThread[] = [];

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(SQL) private readonly sql: Sql,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(AnalysisRepository) private readonly repository: AnalysisRepository,
    @inject(Space) private readonly space: Space,
    @inject(AFTER_ANALYSIS) private readonly followUp: AfterAnalysis,
    @inject(Metrics) private readonly metrics: Metrics,
  ) {}

  /** The handler of one analysis job. */
  readonly run = async ({ payload: { fileId }, attempt, maxAttempts, signal }: JobRun<{ fileId: string }>): Promise<void> => {
    const file = await this.repository.file(this.sql, fileId);
    // Deleted since it was queued: nothing to do.
    if (!file) return;
    try {
      const ended = this.metrics.analysisDuration.startTimer();
      const result = await this.analyse(fileId, file, signal);
      ended({ outcome: result.analysis });
      await this.sql.begin((tx) => this.complete(tx, fileId, file, result));
    } catch (error) {
      if (signal.aborted) throw error;
      // Trying again would give the same answer, or this was the last try: the file is failed, so it never holds the queue.
      if (!refusedByDatabase(error) && attempt < maxAttempts) throw error;
      this.log.error('analysis failed for good; its file is marked failed', { fileId, attempt, error });
      await this.sql.begin((tx) => this.complete(tx, fileId, file, FAILED));
    }
  };

  /** Ends the idle threads (a stop has ended the busy ones' analyses, and their threads with them). */
  async close(): Promise<void> {
    await Promise.all(this.idle.splice(0).map((thread) => thread.close()));
  }

  /**
   * Stores the result, and for a CUT queues its preview (§20), which needs the duration measured here, or fails
   * it with the analysis; for a STEM ZIP with PREVIEW_STEMS on, its audio entries' previews. Nobody acted: `file.analyzed` names the uploader.
   */
  private async complete(tx: Tx, fileId: string, file: FileToAnalyse, result: AnalysisResult): Promise<void> {
    const { projectId, cutId, uploader } = file;
    if (!(await this.repository.finish(tx, fileId, result))) return;
    if (file.type === 'CUT') await this.followUp.cutAnalysed(tx, fileId, uploader?.id ?? null, result.analysis);
    else if (file.type === 'STEM' && result.analysis === 'done' && this.config.previewStems) await this.followUp.stemsAnalysed(tx, fileId, uploader?.id ?? null);
    // A deleted account's file is analysed all the same, without an event (an event needs an actor).
    if (uploader) await this.events.publish(tx, { type: 'file.analyzed', projectId, actor: uploader, data: { fileId, cutId, analysis: result.analysis } });
  }

  private async analyse(fileId: string, file: FileToAnalyse, signal: AbortSignal): Promise<AnalysisResult> {
    const none = { audio: null, stems: null, peaks: null };
    if (file.type !== 'CUT' && file.type !== 'STEM') return { ...none, analysis: 'unsupported' };
    const thread = this.idle.pop() ?? new AnalysisThread({ storage: this.config.storage, dataDir: this.config.dataDir });
    let outcome;
    try {
      outcome = await thread.analyze(
        { task: 'analysis', key: storeKeys.file(fileId, file.extension), type: file.type, extension: file.extension },
        { timeoutMs: analysisBudgetSeconds(file.size, this.config.analysisTimeoutSeconds) * 1000, uploading: () => this.space.uploading, signal },
      );
    } finally {
      this.idle.push(thread);
    }
    switch (outcome.status) {
      case 'audio':
        return { ...none, analysis: 'done', audio: outcome.audio, peaks: outcome.peaks };
      case 'stems':
        return { ...none, analysis: 'done', stems: outcome.stems };
      case 'unsupported':
      // A preview's outcome never answers an analysis.
      case 'preview':
        return { ...none, analysis: 'unsupported' };
      case 'failed':
        this.log.info('analysis failed', { fileId, reason: outcome.reason });
        return { ...none, analysis: 'failed' };
      case 'unreadable':
        // Nothing to analyse, and retrying a missing file would hold the queue. A file purged meanwhile (its
        // trash emptied while it was read) is no fault of anyone's; a file still there is (a disk error, a
        // store that lost it), and the admin hears of it.
        if (await this.repository.file(this.sql, fileId)) this.log.error('analysis could not read the stored file', { fileId, reason: outcome.reason });
        else this.log.info('analysis ended: the file was purged while it was read', { fileId });
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
