// The preview jobs' handler (core/jobs.ts runs it, JOBS_CONCURRENCY_PREVIEW at once per instance, at the lowest
// CPU priority): it reads the file's row, has a worker thread of its own (../analysis/isolated.ts, the thread
// analysis uses) encode and store the preview holding no database connection, then records it and publishes
// `preview.ready` in one transaction. A job run again overwrites its own key. A file deleted meanwhile has its
// preview removed again. A stop abandons the encode (the queue queues its job again).
// A WAV or AIFF's job is queued with its upload and runs beside its analysis (the early job), its index sized
// from the header's bound on the frames; it is an optimisation only: whatever else it meets (no bound in the
// header, bad audio, a store that failed) leaves the preview pending for the job the analysis queues once done,
// which finds a preview made early already made and does nothing.
// A STEM ZIP's job (PREVIEW_STEMS) makes the previews of its pending audio entries one after another, each in
// the thread like a file's, each recorded once made: a job run again goes on from the first still pending.
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CONFIG, LOGGER, SQL } from '../core/di.js';
import { StoredObjects } from '../core/stored-objects.js';
import type { JobRun } from '../core/jobs.js';
import type { Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import { Space } from '../core/space.js';
import { storeKeys } from '../core/store/index.js';
import { EventPublisher } from '../events/publisher.js';
import { AnalysisThread, analysisBudgetSeconds } from '../analysis/isolated.js';
import { type EntryToPreview, type FileToPreview, previewInfoOf, type PreviewResult, PreviewsRepository } from './repository.js';

/**
 * A preview's time budget: real time of the audio, at least two minutes. Encoding runs at about 20 times real
 * time on one core here (a fifth of that while uploads stream in), so a file over it is broken or crafted.
 */
const BUDGET_FLOOR_SECONDS = 120;

export function previewBudgetSeconds(durationMs: number): number {
  return Math.max(BUDGET_FLOOR_SECONDS, Math.ceil(durationMs / 1000));
}

@injectable()
export class PreviewJobs {
  /** Threads not encoding now: one per job running at once, kept from one file to the next. */
  private readonly idle: AnalysisThread[] = [];

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(SQL) private readonly sql: Sql,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(PreviewsRepository) private readonly repository: PreviewsRepository,
    @inject(Space) private readonly space: Space,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(Metrics) private readonly metrics: Metrics,
  ) {}

  /** The handler of one preview job. */
  readonly run = async ({ payload: { fileId }, attempt, maxAttempts, signal }: JobRun<{ fileId: string }>): Promise<void> => {
    const file = await this.repository.file(this.sql, fileId);
    if (file?.type === 'STEM') return this.previewEntries(fileId, file, { attempt, maxAttempts, signal });
    // Deleted since it was queued, or made (or failed) by another job since: nothing to do.
    if (!file || file.preview !== 'pending') return;
    let result: PreviewResult;
    const ended = this.metrics.previewDuration.startTimer();
    if (file.type === 'CUT' && file.analysis === 'pending') {
      const early = await this.encodeEarly(fileId, file, signal);
      if (!early) return;
      result = early;
    } else {
      try {
        result = await this.encode(fileId, file, signal);
      } catch (error) {
        if (signal.aborted || attempt < maxAttempts) throw error;
        this.log.error('preview failed for good; its file is marked failed', { fileId, attempt, error });
        result = { preview: 'failed' };
      }
    }
    if (result.preview !== 'none') ended({ outcome: result.preview });
    const recorded = await this.sql.begin(async (tx) => {
      if (!(await this.repository.finish(tx, fileId, result))) return false;
      const state = await this.repository.state(tx, fileId);
      // A deleted account's file gets its preview all the same, without an event (an event needs an actor).
      if (result.preview === 'done' && file.uploader && state) {
        const preview = previewInfoOf(state, `/api/files/${fileId}/preview`);
        await this.events.publish(tx, { type: 'preview.ready', projectId: file.projectId, actor: file.uploader, data: { fileId, cutId: file.cutId, preview } });
      }
      return true;
    });
    // Deleted while it was encoded: its delete may have removed the preview's key before it was written.
    if (!recorded && result.preview === 'done') await this.objects.removeQuietly(storeKeys.preview(fileId));
  };

  /**
   * The previews of a STEM ZIP's pending entries, first to last (entries queued meanwhile included). A store that
   * failed rejects (the queue tries again from the first entry still pending); on the last attempt that entry is
   * failed and the next goes on.
   */
  private async previewEntries(fileId: string, file: FileToPreview, { attempt, maxAttempts, signal }: Pick<JobRun<unknown>, 'attempt' | 'maxAttempts' | 'signal'>): Promise<void> {
    for (let entry = await this.repository.nextPendingEntry(this.sql, fileId); entry; entry = await this.repository.nextPendingEntry(this.sql, fileId)) {
      const ended = this.metrics.previewDuration.startTimer();
      let result: PreviewResult;
      try {
        result = await this.encodeEntry(fileId, file, entry, signal);
      } catch (error) {
        if (signal.aborted || attempt < maxAttempts) throw error;
        this.log.error('entry preview failed for good; the entry is marked failed', { fileId, entry: entry.position, attempt, error });
        result = { preview: 'failed' };
      }
      ended({ outcome: result.preview });
      const { position } = entry;
      const recorded = await this.sql.begin((tx) => this.repository.finishEntry(tx, fileId, position, result));
      if (recorded) continue;
      // Deleted while it was encoded (see run).
      if (result.preview === 'done') await this.objects.removeQuietly(storeKeys.entryPreview(fileId, position));
      return;
    }
  }

  private async encodeEntry(fileId: string, file: FileToPreview, entry: EntryToPreview, signal: AbortSignal): Promise<PreviewResult> {
    const outcome = await this.inThread(fileId, file, entry.durationMs, previewBudgetSeconds(entry.durationMs), signal, entry.position);
    if (outcome.status === 'preview') return { preview: 'done', facts: outcome.preview };
    if (outcome.status === 'unreadable') throw new Error(`the entry's preview could not be read or stored: ${outcome.reason}`);
    this.log.info('entry preview failed', { fileId, entry: entry.position, outcome: outcome.status, reason: 'reason' in outcome ? outcome.reason : undefined });
    return { preview: 'failed' };
  }

  /** Ends the idle threads (a stop has ended the busy ones' encodes, and their threads with them). */
  async close(): Promise<void> {
    await Promise.all(this.idle.splice(0).map((thread) => thread.close()));
  }

  /**
   * The early job's encode, before the analysis: the preview made, or null (the preview stays pending for the job
   * the analysis queues). Its budget is the analysis' own, from the file's size (its duration is not measured yet).
   */
  private async encodeEarly(fileId: string, file: FileToPreview, signal: AbortSignal): Promise<PreviewResult | null> {
    let outcome;
    try {
      outcome = await this.inThread(fileId, file, null, analysisBudgetSeconds(file.size, this.config.analysisTimeoutSeconds), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      this.log.info('early preview not made; it waits for the analysis', { fileId, error });
      return null;
    }
    if (outcome.status === 'preview') return { preview: 'done', facts: outcome.preview };
    this.log.info('early preview not made; it waits for the analysis', { fileId, outcome: outcome.status });
    return null;
  }

  /** The file's preview, or with `entry` that STEM entry's, made in an idle thread. */
  private async inThread(fileId: string, file: FileToPreview, durationMs: number | null, budgetSeconds: number, signal: AbortSignal, entry?: number) {
    const thread = this.idle.pop() ?? new AnalysisThread({ storage: this.config.storage, dataDir: this.config.dataDir });
    try {
      return await thread.analyze(
        { task: 'preview', fileId, key: storeKeys.file(fileId, file.extension), extension: file.extension, durationMs, ...(entry === undefined ? {} : { entry }) },
        { timeoutMs: budgetSeconds * 1000, uploading: () => this.space.uploading, signal },
      );
    } finally {
      this.idle.push(thread);
    }
  }

  private async encode(fileId: string, file: FileToPreview, signal: AbortSignal): Promise<PreviewResult> {
    if (file.type !== 'CUT') return { preview: 'none' };
    if (file.analysis !== 'done' || file.durationMs === null) return { preview: 'failed' };
    const outcome = await this.inThread(fileId, file, file.durationMs, previewBudgetSeconds(file.durationMs), signal);
    switch (outcome.status) {
      case 'preview':
        return { preview: 'done', facts: outcome.preview };
      case 'unreadable':
        // A store that failed (read or write) may pass: the queue tries again.
        throw new Error(`the preview could not be read or stored: ${outcome.reason}`);
      case 'failed':
        this.log.info('preview failed', { fileId, reason: outcome.reason });
        return { preview: 'failed' };
      default:
        return { preview: 'failed' };
    }
  }
}
