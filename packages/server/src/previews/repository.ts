import type { AnalysisStatus, FileType, PreviewInfo, PreviewStatus } from '@bandcollab/sdk/contract';
import { injectable } from 'tsyringe';
import type { Queryable } from '../core/database.js';
import { JOB_KINDS } from '../core/job-kinds.js';
import { enqueue } from '../core/jobs-repository.js';
import { storeKeys } from '../core/store/index.js';
import type { PreviewFacts } from '../analysis/preview-encode.js';

/** A file to preview, as its job finds it. */
export interface FileToPreview {
  type: FileType;
  extension: string;
  cutId: string;
  projectId: string;
  analysis: AnalysisStatus;
  preview: PreviewStatus;
  /** What analysis measured; null until it ran, or when it failed. */
  durationMs: number | null;
  size: number;
  /** Null once the uploader's account is deleted. */
  uploader: { id: string; name: string } | null;
}

/** A preview made: its file's, or a STEM entry's (`position`), and its key in the store. */
export interface MadePreview {
  fileId: string;
  position: number | null;
  key: string;
}

/** A file's preview columns. */
export interface PreviewState {
  preview: PreviewStatus;
  previewBytes: number | null;
  previewBitrate: number | null;
  previewDurationMs: number | null;
}

export type PreviewResult = { preview: 'done'; facts: PreviewFacts } | { preview: 'failed' | 'none' };

/** A STEM ZIP's audio entry whose preview is pending (PREVIEW_STEMS), as its file's job finds it. */
export interface EntryToPreview {
  position: number;
  /** What the ZIP's analysis read from the entry's header: it sizes the preview's index. */
  durationMs: number;
}

/**
 * The File record's copy of its first entries (files.stems) takes their previews' states from stem_entries, so
 * records keep reading one column. Run after each change of an entry's preview.
 */
async function copyEntryPreviewsToRecord(tx: Queryable, fileId: string): Promise<void> {
  await tx`
    update files f set stems = jsonb_set(f.stems, '{entries}', coalesce((
      select jsonb_agg(case when s.preview is null then e.entry - 'preview'
                            else e.entry || jsonb_build_object('preview', jsonb_build_object('status', s.preview, 'bytes', s.preview_bytes,
                                                                                              'bitrate', s.preview_bitrate, 'durationMs', s.preview_duration_ms)) end
                       order by e.ordinality)
      from jsonb_array_elements(f.stems -> 'entries') with ordinality as e (entry, ordinality)
      left join stem_entries s on s.file_id = f.id and s.position = e.ordinality - 1), '[]'::jsonb))
    where f.id = ${fileId} and f.stems is not null`;
}

/** One job per file: a job queued or running for it is not queued again (the queue's key). */
const previewJobKey = (fileId: string): string => `preview:${fileId}`;
/**
 * The early job of a file (queued with its upload, run beside its analysis) has a key of its own: the analysis,
 * once done, queues the preview again while it is still pending, and an early job still running must not stop
 * that (it may yet fail, or find no bound in the header, and leave the preview pending).
 */
const earlyPreviewJobKey = (fileId: string): string => `preview-early:${fileId}`;

/** The files whose header bounds their length (PCM: WAV, AIFF), so a preview need not wait for the analysis. */
const HEADER_BOUNDED_EXTENSIONS = new Set(['wav', 'aif', 'aiff']);

/** Queues the preview of a file (in the transaction that makes it necessary), round-robin by uploader. */
export async function enqueuePreview(tx: Queryable, fileId: string, uploadedBy: string | null): Promise<void> {
  await enqueue(tx, JOB_KINDS.preview, { fileId }, { key: previewJobKey(fileId), fairKey: uploadedBy ?? undefined });
}

/**
 * With the upload of a CUT whose header bounds its length, queues its preview at once, to run beside the
 * analysis (the preview kind has its own workers, at the lowest CPU priority, so analyses are not held up).
 */
export async function enqueueEarlyPreview(tx: Queryable, file: { id: string; type: FileType; extension: string; uploadedBy: string | null }): Promise<void> {
  if (file.type !== 'CUT' || !HEADER_BOUNDED_EXTENSIONS.has(file.extension.toLowerCase())) return;
  await enqueue(tx, JOB_KINDS.preview, { fileId: file.id }, { key: earlyPreviewJobKey(file.id), fairKey: file.uploadedBy ?? undefined });
}

/** A file's preview as records show it: its URL and facts once it is made. */
export function previewInfoOf(row: PreviewState, url: string): PreviewInfo {
  const done = row.preview === 'done';
  return {
    status: row.preview,
    url: done ? url : null,
    bitrate: done ? row.previewBitrate : null,
    bytes: done ? row.previewBytes : null,
    durationMs: done ? row.previewDurationMs : null,
  };
}

@injectable()
export class PreviewsRepository {
  /** The file a preview job names; null when it was deleted since. */
  async file(sql: Queryable, fileId: string): Promise<FileToPreview | null> {
    const [row] = await sql<(Omit<FileToPreview, 'uploader'> & { uploaderId: string | null; uploaderName: string | null })[]>`
      select f.type, f.extension, f.cut_id, f.project_id, f.analysis, f.preview, (f.audio ->> 'durationMs')::int as duration_ms, f.size,
             u.id as uploader_id, u.name as uploader_name
      from files f left join users u on u.id = f.uploaded_by
      where f.id = ${fileId}`;
    if (!row) return null;
    const { uploaderId, uploaderName, ...file } = row;
    return { ...file, uploader: uploaderId !== null && uploaderName !== null ? { id: uploaderId, name: uploaderName } : null };
  }

  /** After a CUT's analysis (analysis/worker.ts): its preview is queued once the duration is measured, and fails with the analysis. */
  async cutAnalysed(tx: Queryable, fileId: string, uploadedBy: string | null, analysis: Exclude<AnalysisStatus, 'pending'>): Promise<void> {
    if (analysis === 'done') await enqueuePreview(tx, fileId, uploadedBy);
    else await this.finish(tx, fileId, { preview: 'failed' });
  }

  /** After a STEM ZIP's analysis with PREVIEW_STEMS on (analysis/worker.ts): its audio entries' previews are queued. */
  async stemsAnalysed(tx: Queryable, fileId: string, uploadedBy: string | null): Promise<void> {
    await this.queueEntries(tx, fileId, uploadedBy);
  }

  /** Stores the outcome on the file; false when the file is gone. */
  async finish(tx: Queryable, fileId: string, result: PreviewResult): Promise<boolean> {
    const facts = result.preview === 'done' ? result.facts : null;
    const updated = await tx`
      update files set preview = ${result.preview}, preview_bytes = ${facts?.bytes ?? null},
                       preview_bitrate = ${facts?.bitrate ?? null}, preview_duration_ms = ${facts?.durationMs ?? null}
      where id = ${fileId}`;
    return updated.count > 0;
  }

  /** Where a file's preview stands, with its facts; null when the file is gone. */
  async state(tx: Queryable, fileId: string): Promise<PreviewState | null> {
    const [row] = await tx<PreviewState[]>`
      select preview, preview_bytes, preview_bitrate, preview_duration_ms from files where id = ${fileId}`;
    return row ?? null;
  }

  /** The first audio entry of a STEM ZIP whose preview is pending, in the ZIP's order; null when none is. */
  async nextPendingEntry(sql: Queryable, fileId: string): Promise<EntryToPreview | null> {
    const [row] = await sql<EntryToPreview[]>`
      select position, (audio ->> 'durationMs')::int as duration_ms from stem_entries
      where file_id = ${fileId} and preview = 'pending' order by position limit 1`;
    return row ?? null;
  }

  /** Stores an entry's outcome; false when the entry (or its file) is gone. */
  async finishEntry(tx: Queryable, fileId: string, position: number, result: PreviewResult): Promise<boolean> {
    const facts = result.preview === 'done' ? result.facts : null;
    const updated = await tx`
      update stem_entries set preview = ${result.preview === 'done' ? 'done' : 'failed'}, preview_bytes = ${facts?.bytes ?? null},
                              preview_bitrate = ${facts?.bitrate ?? null}, preview_duration_ms = ${facts?.durationMs ?? null}
      where file_id = ${fileId} and position = ${position}`;
    if (updated.count === 0) return false;
    await copyEntryPreviewsToRecord(tx, fileId);
    return true;
  }

  /**
   * Gives the audio entries of a STEM ZIP without a preview state a pending one, and queues the file's job (its
   * upload's analysis, with PREVIEW_STEMS on, or the backfill); answers how many entries it took.
   */
  async queueEntries(tx: Queryable, fileId: string, uploadedBy: string | null): Promise<number> {
    const updated = await tx`update stem_entries set preview = 'pending' where file_id = ${fileId} and audio is not null and preview is null`;
    if (updated.count === 0) return 0;
    await copyEntryPreviewsToRecord(tx, fileId);
    await enqueuePreview(tx, fileId, uploadedBy);
    return updated.count;
  }

  /** Has an entry's made preview made again (its bytes are gone from the store), as `remake` a file's. */
  async remakeEntry(tx: Queryable, fileId: string, position: number): Promise<void> {
    const [row] = await tx<{ uploadedBy: string | null }[]>`
      update stem_entries e set preview = 'pending', preview_bytes = null, preview_bitrate = null, preview_duration_ms = null
      from files f
      where e.file_id = ${fileId} and e.position = ${position} and e.preview = 'done' and f.id = e.file_id
      returning f.uploaded_by`;
    if (!row) return;
    await copyEntryPreviewsToRecord(tx, fileId);
    await enqueuePreview(tx, fileId, row.uploadedBy);
  }

  /**
   * The backfill's step for STEM entries (PREVIEW_STEMS): queues the previews of the audio entries of up to
   * `limit` analysed STEM ZIPs after `afterId` that have none (analysed with the setting off, or before it existed).
   */
  async backfillEntriesStep(tx: Queryable, afterId: string | null, limit: number): Promise<{ lastId: string | null; queued: number }> {
    const rows = await tx<{ id: string; uploadedBy: string | null }[]>`
      select f.id, f.uploaded_by from files f
      where f.type = 'STEM' and f.analysis = 'done' and (${afterId}::uuid is null or f.id > ${afterId}::uuid)
        and exists (select 1 from stem_entries e where e.file_id = f.id and e.audio is not null and e.preview is null)
      order by f.id limit ${limit}`;
    let queued = 0;
    for (const row of rows) queued += await this.queueEntries(tx, row.id, row.uploadedBy);
    return { lastId: rows.at(-1)?.id ?? null, queued };
  }

  /** Every preview made, a file's or a STEM entry's (`position`), by its store key: what backups carry. */
  async made(sql: Queryable): Promise<MadePreview[]> {
    const rows = await sql<{ fileId: string; position: number | null }[]>`
      select id as file_id, null::int as position from files where preview = 'done'
      union all
      select file_id, position from stem_entries where preview = 'done'`;
    return rows.map(({ fileId, position }) => ({ fileId, position, key: position === null ? storeKeys.preview(fileId) : storeKeys.entryPreview(fileId, position) }));
  }

  /**
   * Has every made preview whose key is not in `kept` made again (a restore of a backup that does not carry it);
   * answers how many.
   */
  async remakeAllBut(tx: Queryable, kept: ReadonlySet<string>): Promise<number> {
    let remade = 0;
    for (const preview of await this.made(tx)) {
      if (kept.has(preview.key)) continue;
      if (preview.position === null) await this.remake(tx, preview.fileId);
      else await this.remakeEntry(tx, preview.fileId, preview.position);
      remade++;
    }
    return remade;
  }

  /** Has a made preview made again (its bytes are gone from the store): `pending`, its job queued. */
  async remake(tx: Queryable, fileId: string): Promise<void> {
    const [row] = await tx<{ uploadedBy: string | null }[]>`
      update files set preview = 'pending', preview_bytes = null, preview_bitrate = null, preview_duration_ms = null
      where id = ${fileId} and preview = 'done'
      returning uploaded_by`;
    if (row) await enqueuePreview(tx, fileId, row.uploadedBy);
  }

  /**
   * Queues the previews of up to `limit` files after `afterId` (in id order) that are pending with their
   * analysis done and no job queued or running: the backfill's one step. Answers the last id looked at (null:
   * none left) and how many were queued.
   */
  async backfillStep(tx: Queryable, afterId: string | null, limit: number): Promise<{ lastId: string | null; queued: number }> {
    const rows = await tx<{ id: string; uploadedBy: string | null; analysis: AnalysisStatus }[]>`
      select id, uploaded_by, analysis from files
      where preview = 'pending' and (${afterId}::uuid is null or id > ${afterId}::uuid)
      order by id limit ${limit}`;
    let queued = 0;
    for (const row of rows) {
      // A file still being analysed gets its preview queued when the analysis is done; one whose audio could not
      // be decoded gets none.
      if (row.analysis === 'pending') continue;
      if (row.analysis !== 'done') {
        await this.finish(tx, row.id, { preview: 'failed' });
        continue;
      }
      const [running] = await tx`select 1 from jobs where key = ${previewJobKey(row.id)} and state in ('queued', 'running')`;
      if (running) continue;
      await enqueuePreview(tx, row.id, row.uploadedBy);
      queued++;
    }
    return { lastId: rows.at(-1)?.id ?? null, queued };
  }
}
