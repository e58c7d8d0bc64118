import { type Comment, FILE_TYPE_LABELS, type FileType, type Waveform } from '@bandcollab/sdk/contract';
import { escapeHtml, htmlPage, PAGE_ICON_SRC, PAGE_STYLE_SRC } from '../core/html-page.js';
import type { StoredAudio } from '../analysis/repository.js';

/** What the share page shows. Paths are relative to the page, so it works under any PUBLIC_URL. */
export interface SharePageView {
  name: string;
  type: FileType;
  mimeType: string;
  size: number;
  expiresAt: Date | null;
  /** The bytes, inline (the audio element and the picture load them). */
  bytesPath: string;
  /** The bytes as an attachment; null on a stream-only link (§20), whose page offers no download. */
  downloadPath: string | null;
  /** The listening preview (§20) once made: what the player plays (the original on the "Lossless" toggle). */
  previewPath: string | null;
  /** A CUT's analysis, once done. */
  audio: StoredAudio | null;
  peaks: Waveform | null;
}

/** The loudness versions are matched to on a page's A/B (§20), never boosted past MAX_TRUE_PEAK_DBTP. */
export const MATCH_TARGET_LUFS = -14;
export const MAX_TRUE_PEAK_DBTP = -1;

/** A file link's page: which version it serves, and a feedback link's comments. */
export interface FileSharePageView extends SharePageView {
  /** Shown when the series has several versions or the link follows it. */
  version: { number: number; latest: boolean } | null;
  feedback: FeedbackView | null;
  /** The served file's id: its player's. */
  id: string;
  /** On a link that follows its series, every version (the served one too), compared side by side (§20). */
  compare: CutSharePageView['files'];
}

/**
 * Nothing from another origin: the policy allows this page's inline style (by its hash), its one script from
 * this server (/share-assets/share-page.js, never an inline one), the shared bytes, and the feedback form's
 * requests to this server.
 */
export const SHARE_PAGE_CSP = [
  "default-src 'none'",
  PAGE_STYLE_SRC,
  "script-src 'self'",
  `${PAGE_ICON_SRC} 'self'`,
  "media-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SCRIPT_TAG = '<script src="/share-assets/share-page.js" defer></script>';

/** A feedback link's part of its page: the comments so far, and where the form sends a new one. */
export interface FeedbackView {
  comments: Comment[];
  commentsPath: string;
  /** Closed to new comments by its creator or a project ADMIN: the comments without the form. */
  closed: boolean;
}

export function renderSharePage(view: FileSharePageView): string {
  const name = escapeHtml(view.name);
  // The A/B of a series' versions: the served version's player is the page's own, the others' follow the buttons.
  const ab = abSections(view.compare);
  const others = ab ? view.compare.filter((file) => file.id !== view.id && file.previewPath !== null).map((file) => `<p class="meta">Version ${file.version}</p>${player(file, false)}`).join('') : '';
  const preview =
    view.type === 'CUT'
      ? `${player(view, view.feedback !== null)}${ab}${others}${view.feedback ? feedbackSection(view.feedback) : ''}${needsScript(view) || view.feedback ? SCRIPT_TAG : ''}`
      : view.type === 'IMAGE'
        ? `<img src="${escapeHtml(view.bytesPath)}" alt="${name}">`
        : '';
  const expiry = expiryNote(view.expiresAt);
  const audio = audioMeta(view.audio);
  const version = view.version ? `Version ${view.version.number}${view.version.latest ? ' (latest)' : ''} · ` : '';
  return htmlPage(
    `${name} · bandcollab`,
    `<h1>${name}</h1>
<p class="meta">${version}${capitalized(FILE_TYPE_LABELS[view.type])} · ${formatSize(view.size)}</p>${audio}
${preview}
${view.downloadPath === null ? '' : `<a class="download" href="${escapeHtml(view.downloadPath)}" download>Download</a>`}
${expiry}`,
  );
}

/** The comments under the player, visible without a click, and the form that adds one at the playhead. */
function feedbackSection({ comments, commentsPath, closed }: FeedbackView): string {
  const threads = comments.filter((comment) => !comment.deleted || (comment.replies ?? []).length > 0);
  const items = threads.map((comment) => commentItem(comment)).join('\n');
  const open = comments.filter((comment) => !comment.deleted).length;
  return `
<section class="feedback" data-comments-url="${escapeHtml(commentsPath)}">
<h2>Comments <span class="count">${open}</span></h2>
${threads.length === 0 ? '<p class="empty">No comments yet: play the mix and leave the first.</p>' : ''}
<ol class="comments">
${items}
</ol>
${closed ? '<p class="closed">This link is closed to new comments.</p>' : COMMENT_FORM}
</section>
`;
}

const COMMENT_FORM = `<form class="comment-form" novalidate>
<div class="row">
<label class="name">Your name <input name="name" maxlength="100" required autocomplete="name"></label>
<label class="at">At <input name="at" inputmode="decimal" value="0:00.0" aria-describedby="at-help"></label>
<label class="end">To <input name="end" inputmode="decimal" placeholder="optional"></label>
<button type="button" class="end-here">End at playhead</button>
</div>
<p class="help" id="at-help">The time follows the playhead: pause where you mean, or type it (m:ss). Leave it empty for the whole mix.</p>
<label class="body">Comment <textarea name="body" rows="3" maxlength="5000" required></textarea></label>
<div class="row"><button type="submit">Add comment</button><span class="form-error" role="alert"></span></div>
</form>`;

function commentItem(comment: Comment): string {
  const at = comment.atMs === null ? '' : ` data-at-ms="${comment.atMs}"${comment.endMs === null ? '' : ` data-end-ms="${comment.endMs}"`}`;
  const time =
    comment.atMs === null
      ? '<span class="time whole">Whole mix</span>'
      : `<button type="button" class="time">${clock(comment.atMs)}${comment.endMs === null ? '' : `–${clock(comment.endMs)}`}</button>`;
  const badge = comment.author.guest ? '<span class="badge">guest</span>' : '';
  const resolved = comment.resolved ? '<span class="badge resolved">resolved</span>' : '';
  const body = comment.deleted ? '<p class="body deleted">Deleted</p>' : `<p class="body">${escapeHtml(comment.body ?? '')}</p>`;
  const replies = (comment.replies ?? [])
    .map((reply) => `<li class="reply"><div class="head"><span class="author">${escapeHtml(reply.author.name)}</span>${reply.author.guest ? '<span class="badge">guest</span>' : ''}</div><p class="body">${escapeHtml(reply.body ?? '')}</p></li>`)
    .join('');
  return `<li class="comment${comment.author.guest ? ' guest' : ''}" data-id="${escapeHtml(comment.id)}"${at}><div class="head">${time}<span class="author">${escapeHtml(comment.author.name)}</span>${badge}${resolved}</div>${body}${replies ? `<ol class="replies">${replies}</ol>` : ''}</li>`;
}

/** 83,450 ms → "1:23.5", as the page's script writes times. */
function clock(ms: number): string {
  const tenths = Math.round(ms / 100);
  const minutes = Math.floor(tenths / 600);
  return `${minutes}:${((tenths - minutes * 600) / 10).toFixed(1).padStart(4, '0')}`;
}

/** What the share page of a cut shows. Paths are relative to the page, as for a file. */
export interface CutSharePageView {
  name: string;
  expiresAt: Date | null;
  files: (Omit<SharePageView, 'expiresAt'> & { id: string; seriesId: string; version: number })[];
  /** Every file as one ZIP; null on a stream-only link. */
  archivePath: string | null;
}

/**
 * The cut's files, each with its own download and, for audio, a player (with its waveform and what the
 * analysis measured, once done), and one "Download all".
 */
export function renderCutSharePage(view: CutSharePageView): string {
  const name = escapeHtml(view.name);
  const items = view.files.map((file) => {
    const audio = file.type === 'CUT' ? `${audioMeta(file.audio)}\n${player(file, false)}` : '';
    const download = file.downloadPath === null ? '' : `\n<a href="${escapeHtml(file.downloadPath)}" download>Download</a>`;
    return `<li>
<p class="file">${escapeHtml(file.name)} <span class="meta">${capitalized(FILE_TYPE_LABELS[file.type])} · ${formatSize(file.size)}</span></p>${audio}${download}
</li>`;
  });
  const seek = view.files.some((file) => file.type === 'CUT' && needsScript(file)) ? `\n${SCRIPT_TAG}` : '';
  const count = view.files.length === 1 ? '1 file' : `${view.files.length} files`;
  const total = view.files.reduce((sum, file) => sum + file.size, 0);
  const expiry = expiryNote(view.expiresAt);
  return htmlPage(
    `${name} · bandcollab`,
    `<h1>${name}</h1>
<p class="meta">${count} · ${formatSize(total)}</p>
${view.archivePath === null ? '' : `<a class="download" href="${escapeHtml(view.archivePath)}" download>Download all</a>`}${abSections(view.files)}
<ul class="files">
${items.join('\n')}
</ul>${seek}
${expiry}`,
  );
}

export function renderNotFoundPage(): string {
  return htmlPage(
    'Link not found · bandcollab',
    `<h1>Link not found</h1>
<p class="meta">This share link does not exist, has expired or was revoked.</p>`,
  );
}

/** What the analysis measured, on a line of its own; nothing before it is done. */
function audioMeta(audio: StoredAudio | null): string {
  return audio ? `\n<p class="meta">${escapeHtml(describeAudio(audio))}</p>` : '';
}

function expiryNote(expiresAt: Date | null): string {
  return expiresAt ? `<p class="expiry">This link works until ${expiresAt.toUTCString()}.</p>` : '';
}

/**
 * An audio file's player: its waveform once the analysis has drawn one (a click there seeks), and on a feedback
 * link's page a timeline for the comment markers and the playhead even before that.
 */
/** Formats no browser's audio element plays (Chromium, Firefox and Safari all refuse AIFF). */
const UNPLAYABLE_IN_BROWSERS = new Set(['audio/aiff']);

/**
 * The versions of each series with two or more previews, side by side (§20): the page's script switches between
 * their players at the same position, each played through a Web Audio gain that matches its loudness
 * (HTMLMediaElement.volume does nothing on iOS).
 */
function abSections(files: CutSharePageView['files']): string {
  const bySeries = new Map<string, CutSharePageView['files']>();
  for (const file of files) {
    if (file.type !== 'CUT' || file.previewPath === null || !file.audio) continue;
    bySeries.set(file.seriesId, [...(bySeries.get(file.seriesId) ?? []), file]);
  }
  return [...bySeries.values()]
    .filter((versions) => versions.length >= 2)
    .map((versions) => {
      const sorted = [...versions].sort((a, b) => a.version - b.version);
      const buttons = sorted
        .map((file, i) => `<button type="button" class="ab-choice" data-target="player-${escapeHtml(file.id)}" aria-pressed="${i === 0 ? 'true' : 'false'}">Version ${file.version}</button>`)
        .join('');
      return `
<section class="ab" aria-label="Compare versions">
<h2>Compare versions of ${escapeHtml(sorted[0]!.name)}</h2>
<p class="meta">Matched to ${MATCH_TARGET_LUFS} LUFS (never above ${MAX_TRUE_PEAK_DBTP} dBTP); switching keeps the position.</p>
<div class="row">${buttons}<button type="button" class="ab-play">Play</button></div>
</section>`;
    })
    .join('');
}

/** A player the page's script works: a waveform to seek on, or a preview beside its original (the toggle, A/B). */
function needsScript(file: Pick<SharePageView, 'audio' | 'peaks' | 'previewPath'>): boolean {
  return (file.audio !== null && file.peaks !== null) || file.previewPath !== null;
}

function player(file: Pick<SharePageView, 'bytesPath' | 'downloadPath' | 'previewPath' | 'audio' | 'peaks' | 'mimeType'> & { id?: string }, feedback: boolean): string {
  const waveform = file.audio && file.peaks ? waveformSvg(file.peaks) : '';
  const timeline = feedback || waveform;
  const duration = file.audio ? ` data-duration-ms="${file.audio.durationMs}"` : '';
  const wave = timeline
    ? `<div class="wave${waveform ? '' : ' bare'}"${duration}>${waveform}<div class="playhead"></div>${feedback ? '<div class="markers"></div>' : ''}</div>${feedback ? '<div class="marker-note" hidden></div>' : ''}`
    : '';
  // The preview plays; the original only on the toggle, and never on a stream-only link.
  const original = file.downloadPath === null ? null : file.bytesPath;
  const src = file.previewPath ?? original;
  const note =
    file.previewPath === null && original === null
      ? '<p class="meta">The preview is being made: reload the page shortly.</p>'
      : file.previewPath === null && UNPLAYABLE_IN_BROWSERS.has(file.mimeType)
        ? '<p class="meta">Browsers do not play this format: download it to listen.</p>'
        : '';
  const toggle = file.previewPath !== null && original !== null ? '<label class="lossless"><input type="checkbox"> Lossless (the original)</label>' : '';
  // What the A/B's gains are set from; only a preview is compared.
  const loudness = file.audio && file.previewPath
    ? `${file.audio.loudness.integratedLufs === null ? '' : ` data-lufs="${file.audio.loudness.integratedLufs}"`}${file.audio.loudness.truePeakDbtp === null ? '' : ` data-true-peak="${file.audio.loudness.truePeakDbtp}"`}`
    : '';
  const sources = toggle ? ` data-preview="${escapeHtml(file.previewPath!)}" data-original="${escapeHtml(original!)}"` : '';
  const id = file.id ? ` id="player-${escapeHtml(file.id)}"` : '';
  const audio = src === null ? '' : `<audio controls preload="metadata" src="${escapeHtml(src)}"${sources}${loudness}></audio>`;
  return `<div class="player"${id}>${wave}${audio}${toggle}${note}</div>`;
}

/** One vertical stroke per min/max pair, in a box as wide as the pairs and 256 high (the 8-bit range). */
function waveformSvg(peaks: Waveform): string {
  let path = '';
  for (let i = 0; i < peaks.length; i += 1) {
    const min = peaks.data[2 * i]!;
    const max = peaks.data[2 * i + 1]!;
    // At least one unit high, so silence still draws a line.
    path += `M${i} ${128 - max}V${Math.max(128 - min, 129 - max)}`;
  }
  return `<svg class="waveform" viewBox="0 0 ${peaks.length} 256" preserveAspectRatio="none" role="img" aria-label="Waveform; click to seek"><path d="${path}" stroke="#4b4bd8" stroke-width="1" vector-effect="non-scaling-stroke" fill="none"/></svg>`;
}

/** "3:25 · FLAC, 48 kHz, 24-bit, stereo · -14.1 LUFS, range 6.2 LU, true peak -1.0 dBTP" */
function describeAudio(audio: StoredAudio): string {
  const seconds = Math.round(audio.durationMs / 1000);
  const duration = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
  const channels = audio.channels === 1 ? 'mono' : audio.channels === 2 ? 'stereo' : `${audio.channels} channels`;
  const format = [audio.codec.toUpperCase(), `${audio.sampleRate / 1000} kHz`, ...(audio.bitDepth ? [`${audio.bitDepth}-bit`] : []), channels].join(', ');
  const { integratedLufs, loudnessRangeLu, truePeakDbtp } = audio.loudness;
  const loudness = [
    integratedLufs === null ? 'silent' : `${integratedLufs.toFixed(1)} LUFS`,
    ...(loudnessRangeLu === null ? [] : [`range ${loudnessRangeLu.toFixed(1)} LU`]),
    ...(truePeakDbtp === null ? [] : [`true peak ${truePeakDbtp.toFixed(1)} dBTP`]),
  ].join(', ');
  return `${duration} · ${format} · ${loudness}`;
}

/** 1,536 → "1.5 KiB", 2,097,152 → "2.0 MiB"; sizes under 1 KiB in bytes. */
function formatSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

function capitalized(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}
