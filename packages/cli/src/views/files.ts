// How band shows files to people: their lists and details, their audio and stems, what a transfer did
// (file, publish, the uploads of a folder and the checks of a cut's audio). The words of each file type
// are here, for every view that names one.
import type { AudioInfo, FileRecord, FileType, StemAudio } from '@bandcollab/sdk';
import type { DownloadReport, UploadReport } from '../bulk-reports.js';
import { counted, formatBytes, formatTime, type Output } from '../render.js';

/**
 * What people call each file type (the API's codes are CUT, STEM, IMAGE and SESSION): the words of the SDK's
 * FILE_TYPE_LABELS, kept here because importing a value from the SDK would load it (undici) for --help.
 */
export const TYPE_LABELS: Record<FileType, string> = { CUT: 'audio', STEM: 'stems (ZIP)', IMAGE: 'image', SESSION: 'session file' };

/** A file as a person names it: the versions of a mix share their name, so the version goes with it ("mix.wav v3"). */
export function fileLabel(file: Pick<FileRecord, 'name' | 'series'>): string {
  return file.series.count > 1 || file.series.version > 1 ? `${file.name} v${file.series.version}` : file.name;
}

export function fileTable(out: Output, files: readonly FileRecord[]): string {
  return out.table(files, [
    { header: 'NAME', value: (f) => f.name },
    { header: 'VERSION', value: (f) => `v${f.series.version}` },
    { header: 'TYPE', value: (f) => TYPE_LABELS[f.type] },
    { header: 'SIZE', value: (f) => formatBytes(f.size) },
    { header: 'DURATION', value: (f) => fileDuration(f) },
    { header: 'UPLOADED BY', value: (f) => f.uploadedBy.name },
    { header: 'CREATED', value: (f) => formatTime(f.createdAt) },
    { header: 'ID', value: (f) => f.id },
  ]);
}

export function fileView(out: Output, file: FileRecord): string {
  return [
    `${out.bold(file.name)}  ${out.dim(file.id)}`,
    `Type:        ${TYPE_LABELS[file.type]} (${file.mimeType})`,
    `Size:        ${formatBytes(file.size)} (${file.size} bytes)`,
    `SHA-256:     ${file.sha256}`,
    `Uploaded by: ${file.uploadedBy.name}, ${formatTime(file.createdAt)}`,
    `Cut:         ${file.cutId}`,
    `Path:        ${file.url}`,
    `Analysis:    ${file.analysis}`,
    ...(file.audio ? audioLines(file.audio) : []),
    ...(file.stems ? ['', stemsTable(out, file.stems.entries), stemsVerdict(file)] : []),
  ].join('\n');
}

/** A CUT's duration, a STEM ZIP's longest stem; "pending" until analysed, "-" when there is none. */
function fileDuration(file: FileRecord): string {
  if (file.audio) return formatDuration(file.audio.durationMs);
  if (file.stems?.summary.longestMs != null) return formatDuration(file.stems.summary.longestMs);
  return file.analysis === 'pending' ? 'pending' : '-';
}

function audioLines(audio: AudioInfo): string[] {
  const { integratedLufs, loudnessRangeLu, truePeakDbtp } = audio.loudness;
  return [
    `Format:      ${formatAudio(audio)}, ${Math.round(audio.bitrate / 1000)} kbit/s`,
    `Duration:    ${formatDuration(audio.durationMs)}`,
    `Loudness:    ${integratedLufs === null ? 'silent' : `${integratedLufs.toFixed(1)} LUFS integrated`}${loudnessRangeLu === null ? '' : `, range ${loudnessRangeLu.toFixed(1)} LU`}`,
    `True peak:   ${truePeakDbtp === null ? 'none (digital silence)' : `${truePeakDbtp.toFixed(1)} dBTP`}`,
  ];
}

/** "FLAC, 48 kHz, 24-bit, stereo" */
function formatAudio(audio: StemAudio): string {
  const channels = audio.channels === 1 ? 'mono' : audio.channels === 2 ? 'stereo' : `${audio.channels} channels`;
  return [audio.codec.toUpperCase(), formatRate(audio.sampleRate), ...(audio.bitDepth ? [`${audio.bitDepth}-bit`] : []), channels].join(', ');
}

export const formatRate = (hertz: number): string => `${hertz / 1000} kHz`;

/** 205_432 ms → "3:25.4" */
function formatDuration(ms: number): string {
  const tenths = Math.round(ms / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = (tenths % 600) / 10;
  return `${minutes}:${seconds.toFixed(1).padStart(4, '0')}`;
}

function stemsTable(out: Output, entries: NonNullable<FileRecord['stems']>['entries']): string {
  return out.table(entries, [
    { header: 'ENTRY', value: (e) => e.path },
    { header: 'SIZE', value: (e) => formatBytes(e.size) },
    { header: 'FORMAT', value: (e) => (e.audio ? formatAudio(e.audio) : '-') },
    { header: 'DURATION', value: (e) => (e.audio ? formatDuration(e.audio.durationMs) : '-') },
  ]);
}

export function stemsVerdict(file: FileRecord): string {
  const summary = file.stems!.summary;
  return summary.consistent
    ? `${counted(summary.audioCount, 'stem')} ${summary.audioCount === 1 ? 'lines' : 'line'} up: one sample rate, one bit depth, one length`
    : `${counted(summary.audioCount, 'stem')} of ${summary.entryCount} ${summary.entryCount === 1 ? 'entry' : 'entries'} ${summary.audioCount === 1 ? 'does' : 'do'} not line up`;
}

/** One audio stream `band cut check` compares: a CUT file, or one audio entry of a STEM ZIP. */
export interface CheckedAudio {
  /** The file name, and for a stem the entry path after it: "stems.zip › drums.wav". */
  name: string;
  /** null when the file could not be analysed. */
  audio: StemAudio | null;
}

/** `band cut check`: every file's format side by side. */
export function cutCheckTable(out: Output, audio: readonly CheckedAudio[]): string {
  return out.table(audio, [
    { header: 'FILE', value: (a) => a.name },
    { header: 'CODEC', value: (a) => a.audio?.codec ?? 'not analysable' },
    { header: 'RATE', value: (a) => (a.audio ? formatRate(a.audio.sampleRate) : '-') },
    { header: 'BITS', value: (a) => (a.audio?.bitDepth ? String(a.audio.bitDepth) : '-') },
    { header: 'CH', value: (a) => (a.audio ? String(a.audio.channels) : '-') },
    { header: 'DURATION', value: (a) => (a.audio ? formatDuration(a.audio.durationMs) : '-') },
  ]);
}

/** "sample rates differ: 48 kHz (drums.wav, bass.wav), 44.1 kHz (vox.wav)" */
export function mismatchView(what: string, groups: ReadonlyMap<string, readonly string[]>): string {
  return `${what} differ: ${[...groups].map(([value, names]) => `${value} (${names.join(', ')})`).join(', ')}`;
}

/** A file's listening preview (§20) in a word, with its size once made: "done (1.9 MiB)", "pending", "none". */
export function previewState({ preview }: FileRecord): string {
  return preview.status === 'done' && preview.bytes !== null ? `done (${formatBytes(preview.bytes)})` : preview.status;
}

/** What `band file preview` says once the preview is saved. */
export function savedPreviewView(file: FileRecord, target: string): string {
  return `Saved the preview of ${file.name} to ${target} (${formatBytes(file.preview.bytes ?? 0)}, AAC ${Math.round((file.preview.bitrate ?? 0) / 1000)} kbps)`;
}

export function savedView(file: FileRecord, target: string): string {
  return `Saved ${file.name} to ${target} (${formatBytes(file.size)})`;
}

/** The summary line of `band file download --cut`. */
export function downloadSummaryView(fileCount: number, report: DownloadReport): string {
  const downloaded = fileCount - report.skipped - report.failures.length;
  return (
    `Downloaded ${counted(downloaded, 'file')} (${formatBytes(report.downloadedBytes)}) to ${report.dir} in ${report.seconds.toFixed(1)} s; ` +
    `${report.skipped} skipped (already there, same sha256); ${report.failures.length} failed`
  );
}

export function publishedView(file: FileRecord): string {
  return `Published ${file.name} (${file.id})`;
}

/** publish found the file's content on the cut already (a re-run): that record stands for it. */
export function alreadyPublishedView(localName: string, cut: { name: string }): string {
  return `${localName} is unchanged: already on cut ${cut.name} (the same content), not uploaded again`;
}

/** A new version not uploaded: the latest one has the same content. */
export function unchangedView(localName: string): string {
  return `${localName} is unchanged (the latest version has the same content): not uploaded`;
}

/** A series side by side: who uploaded each version, when, its measurements, open comments and approvals. */
export function versionsTable(out: Output, versions: readonly FileRecord[]): string {
  const decibels = (value: number | null | undefined, unit: string) => (value === null || value === undefined ? '' : `${value.toFixed(1)} ${unit}`);
  return out.table(versions, [
    { header: 'VERSION', value: (f) => `v${f.series.version}${f.series.latest ? ' (latest)' : ''}` },
    { header: 'UPLOADED BY', value: (f) => f.uploadedBy.name },
    { header: 'CREATED', value: (f) => formatTime(f.createdAt) },
    { header: 'SIZE', value: (f) => formatBytes(f.size) },
    { header: 'DURATION', value: (f) => fileDuration(f) },
    { header: 'LOUDNESS', value: (f) => decibels(f.audio?.loudness.integratedLufs, 'LUFS') },
    { header: 'TRUE PEAK', value: (f) => decibels(f.audio?.loudness.truePeakDbtp, 'dBTP') },
    { header: 'PREVIEW', value: (f) => previewState(f) },
    { header: 'OPEN COMMENTS', value: (f) => String(f.review.openComments) },
    { header: 'APPROVALS', value: (f) => `${f.review.approved}${f.review.changesRequested > 0 ? ` (${f.review.changesRequested} changes requested)` : ''}` },
    { header: 'SHA-256', value: (f) => f.sha256.slice(0, 12) },
    { header: 'ID', value: (f) => f.id },
  ]);
}

/** A file `band file upload` skips: its content is on the cut already. */
export function alreadyOnCutView(localName: string, cut: { name: string }): string {
  return `${localName} is already on cut ${cut.name} (the same content): skipped; --duplicate uploads it again`;
}

/** The summary line of a bulk upload. */
export function uploadSummaryView(fileCount: number, report: UploadReport): string {
  const uploaded = fileCount - report.skipped - report.failures.length;
  return (
    `Uploaded ${counted(uploaded, 'file')} (${formatBytes(report.uploadedBytes)}) in ${report.seconds.toFixed(1)} s; ` +
    `${report.skipped} skipped (already on the cut); ${report.failures.length} failed`
  );
}
