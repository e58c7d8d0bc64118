import { createHash } from 'node:crypto';
import { FILE_TYPE_LABELS, type FileType, type Waveform } from '@bandcollab/sdk/contract';
import { escapeHtml, htmlPage, PAGE_STYLE_SRC } from '../core/html-page.js';
import type { StoredAudio } from '../files/repository.js';

/** What the share page shows. Paths are relative to the page, so it works under any PUBLIC_URL. */
export interface SharePageView {
  name: string;
  type: FileType;
  size: number;
  expiresAt: Date | null;
  /** The bytes, inline (the audio element and the picture load them). */
  bytesPath: string;
  /** The bytes as an attachment. */
  downloadPath: string;
  /** A CUT's analysis, once done. */
  audio: StoredAudio | null;
  peaks: Waveform | null;
}

/**
 * The one script: a click on a waveform seeks the player after it to that point. Inline and allowed by its
 * hash, like the style, so the page still loads nothing from elsewhere and runs nothing else.
 */
const SEEK_SCRIPT = `
for (const wave of document.querySelectorAll('svg.waveform')) {
  const audio = wave.nextElementSibling;
  wave.addEventListener('click', (event) => {
    const box = wave.getBoundingClientRect();
    const duration = Number.isFinite(audio.duration) ? audio.duration : Number(wave.dataset.duration);
    audio.currentTime = Math.min(Math.max((event.clientX - box.left) / box.width, 0), 1) * duration;
  });
}
`;

/**
 * Nothing from another origin: the policy allows exactly this page's inline style and seek script (by their
 * hashes) and the shared bytes from this server.
 */
export const SHARE_PAGE_CSP = [
  "default-src 'none'",
  PAGE_STYLE_SRC,
  `script-src 'sha256-${createHash('sha256').update(SEEK_SCRIPT).digest('base64')}'`,
  "img-src 'self'",
  "media-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function renderSharePage(view: SharePageView): string {
  const name = escapeHtml(view.name);
  const preview =
    view.type === 'CUT'
      ? `${player(view)}${view.audio && view.peaks ? `<script>${SEEK_SCRIPT}</script>` : ''}`
      : view.type === 'IMAGE'
        ? `<img src="${escapeHtml(view.bytesPath)}" alt="${name}">`
        : '';
  const expiry = expiryNote(view.expiresAt);
  const audio = audioMeta(view.audio);
  return htmlPage(
    `${name} · bandcollab`,
    `<h1>${name}</h1>
<p class="meta">${capitalized(FILE_TYPE_LABELS[view.type])} · ${formatSize(view.size)}</p>${audio}
${preview}
<a class="download" href="${escapeHtml(view.downloadPath)}" download>Download</a>
${expiry}`,
  );
}

/** What the share page of a cut shows. Paths are relative to the page, as for a file. */
export interface CutSharePageView {
  name: string;
  expiresAt: Date | null;
  files: Omit<SharePageView, 'expiresAt'>[];
  /** Every file as one ZIP. */
  archivePath: string;
}

/**
 * The cut's files, each with its own download and, for audio, a player (with its waveform and what the
 * analysis measured, once done), and one "Download all".
 */
export function renderCutSharePage(view: CutSharePageView): string {
  const name = escapeHtml(view.name);
  const items = view.files.map((file) => {
    const audio = file.type === 'CUT' ? `${audioMeta(file.audio)}\n${player(file)}` : '';
    return `<li>
<p class="file">${escapeHtml(file.name)} <span class="meta">${capitalized(FILE_TYPE_LABELS[file.type])} · ${formatSize(file.size)}</span></p>${audio}
<a href="${escapeHtml(file.downloadPath)}" download>Download</a>
</li>`;
  });
  const seek = view.files.some((file) => file.type === 'CUT' && file.audio && file.peaks) ? `\n<script>${SEEK_SCRIPT}</script>` : '';
  const count = view.files.length === 1 ? '1 file' : `${view.files.length} files`;
  const total = view.files.reduce((sum, file) => sum + file.size, 0);
  const expiry = expiryNote(view.expiresAt);
  return htmlPage(
    `${name} · bandcollab`,
    `<h1>${name}</h1>
<p class="meta">${count} · ${formatSize(total)}</p>
<a class="download" href="${escapeHtml(view.archivePath)}" download>Download all</a>
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

/** An audio file's player, after its waveform once the analysis has drawn one (a click there seeks). */
function player(file: Pick<SharePageView, 'bytesPath' | 'audio' | 'peaks'>): string {
  const waveform = file.audio && file.peaks ? waveformSvg(file.peaks, file.audio.durationMs) : '';
  return `${waveform}<audio controls preload="metadata" src="${escapeHtml(file.bytesPath)}"></audio>`;
}

/** One vertical stroke per min/max pair, in a box as wide as the pairs and 256 high (the 8-bit range). */
function waveformSvg(peaks: Waveform, durationMs: number): string {
  let path = '';
  for (let i = 0; i < peaks.length; i += 1) {
    const min = peaks.data[2 * i]!;
    const max = peaks.data[2 * i + 1]!;
    // At least one unit high, so silence still draws a line.
    path += `M${i} ${128 - max}V${Math.max(128 - min, 129 - max)}`;
  }
  return `<svg class="waveform" data-duration="${durationMs / 1000}" viewBox="0 0 ${peaks.length} 256" preserveAspectRatio="none" role="img" aria-label="Waveform; click to seek"><path d="${path}" stroke="#3b3bd6" stroke-width="1" vector-effect="non-scaling-stroke" fill="none"/></svg>`;
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
