import type { AnalysisStatus, AudioInfo, FileType, PreviewStatus, StemEntry, Stems, Waveform } from '@bandcollab/sdk/contract';
import { injectable } from 'tsyringe';
import type { Queryable, Tx } from '../core/database.js';

/** A file's AudioInfo as analysis stores it: the peaks URL is derived from the file's id. */
export type StoredAudio = Omit<AudioInfo, 'peaksUrl'>;

/** A STEM entry's preview as stored (§20, PREVIEW_STEMS): in stem_entries' columns, and in the record's copy (files.stems). */
export interface StoredEntryPreview {
  status: Exclude<PreviewStatus, 'none'>;
  bytes: number | null;
  bitrate: number | null;
  durationMs: number | null;
}

/** A StemEntry as files.stems stores it: its preview without the URL (derived), absent in ZIPs analysed before previews of entries. */
export type StoredStemEntry = Omit<StemEntry, 'preview'> & { preview?: StoredEntryPreview | null };
export type StoredStems = Omit<Stems, 'entries'> & { entries: StoredStemEntry[] };

/** How many of a STEM ZIP's entries its File record lists; the rest are paged from GET /api/files/:id/entries. */
export const STEM_ENTRIES_IN_RECORD = 100;

/** 5 parameters a row: well under PostgreSQL's 65,535 parameters a statement. */
const ENTRY_ROWS_PER_INSERT = 5000;

/** A file to analyse, as its analysis job finds it. */
export interface FileToAnalyse {
  type: FileType;
  extension: string;
  cutId: string;
  projectId: string;
  size: number;
  /** Null once the uploader's account is deleted. */
  uploader: { id: string; name: string } | null;
}

interface FileRow extends Omit<FileToAnalyse, 'uploader'> {
  uploaderId: string | null;
  uploaderName: string | null;
}

export interface AnalysisResult {
  analysis: Exclude<AnalysisStatus, 'pending'>;
  audio: StoredAudio | null;
  /** Its entries without previews: those are queued after (PREVIEW_STEMS). */
  stems: StoredStems | null;
  peaks: Waveform | null;
}

@injectable()
export class AnalysisRepository {
  /** The file an analysis job names; null when it was deleted since. */
  async file(sql: Queryable, fileId: string): Promise<FileToAnalyse | null> {
    const [row] = await sql<FileRow[]>`
      select f.type, f.extension, f.cut_id, f.project_id, f.size, u.id as uploader_id, u.name as uploader_name
      from files f left join users u on u.id = f.uploaded_by
      where f.id = ${fileId}`;
    if (!row) return null;
    const { uploaderId, uploaderName, ...file } = row;
    return { ...file, uploader: uploaderId !== null && uploaderName !== null ? { id: uploaderId, name: uploaderName } : null };
  }

  /**
   * Stores the result on the file; false when the file is gone. A STEM's entries go to
   * stem_entries, one row each; the file keeps the summary and only the first STEM_ENTRIES_IN_RECORD of them,
   * so the records every answer carries stay small however many entries the ZIP lists.
   */
  async finish(tx: Tx, fileId: string, result: AnalysisResult): Promise<boolean> {
    const shown = result.stems && { ...result.stems, entries: result.stems.entries.slice(0, STEM_ENTRIES_IN_RECORD) };
    const updated = await tx`
      update files set analysis = ${result.analysis}, audio = ${json(tx, result.audio)}, stems = ${json(tx, shown)},
                       peaks = ${json(tx, result.peaks)}
      where id = ${fileId}`;
    if (updated.count > 0 && result.stems) await this.storeEntries(tx, fileId, result.stems.entries);
    return updated.count > 0;
  }

  private async storeEntries(tx: Tx, fileId: string, entries: StoredStemEntry[]): Promise<void> {
    await tx`delete from stem_entries where file_id = ${fileId}`;
    for (let start = 0; start < entries.length; start += ENTRY_ROWS_PER_INSERT) {
      const rows = entries.slice(start, start + ENTRY_ROWS_PER_INSERT).map((entry, i) => ({
        fileId,
        position: start + i,
        path: storableText(entry.path),
        size: entry.size,
        audio: entry.audio === null ? null : json(tx, entry.audio),
      }));
      await tx`insert into stem_entries ${tx(rows)}`;
    }
  }
}

function json(tx: Tx, value: object | null) {
  // postgres.js's json parameter type admits only its own JSONValue; these records are plain JSON.
  return value === null ? null : tx.json(storableJson(value) as Parameters<Tx['json']>[0]);
}

// With the u flag a surrogate pair is one code point, so only the lone halves match the range.
const UNSTORABLE = /[\0\uD800-\uDFFF]/gu;

/**
 * The value with every string made storable in jsonb, which refuses U+0000 and lone surrogates (a ZIP entry
 * name is whatever bytes its maker wrote): each becomes U+FFFD, the replacement character.
 */
/** Text as PostgreSQL stores it (text and jsonb refuse U+0000; jsonb lone surrogates too). */
const storableText = (text: string): string => text.replace(UNSTORABLE, '\uFFFD');

function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableJson(key), storableJson(item)]));
  return value;
}
