import { FILE_TYPE_LABELS, type FileType } from '@bandcollab/sdk/contract';
import { escapeHtml, htmlPage, PAGE_STYLE_SRC } from '../core/html-page.js';

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
}

/**
 * No scripts, and nothing from another origin: the policy allows exactly this page's inline style (by its
 * hash) and the shared bytes from this server.
 */
export const SHARE_PAGE_CSP = [
  "default-src 'none'",
  PAGE_STYLE_SRC,
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
      ? `<audio controls preload="metadata" src="${escapeHtml(view.bytesPath)}"></audio>`
      : view.type === 'IMAGE'
        ? `<img src="${escapeHtml(view.bytesPath)}" alt="${name}">`
        : '';
  const expiry = view.expiresAt ? `<p class="expiry">This link works until ${view.expiresAt.toUTCString()}.</p>` : '';
  return htmlPage(
    `${name} · bandcollab`,
    `<h1>${name}</h1>
<p class="meta">${capitalized(FILE_TYPE_LABELS[view.type])} · ${formatSize(view.size)}</p>
${preview}
<a class="download" href="${escapeHtml(view.downloadPath)}" download>Download</a>
${expiry}`,
  );
}

/** What the share page of a cut shows. Paths are relative to the page, as for a file. */
export interface CutSharePageView {
  name: string;
  expiresAt: Date | null;
  files: { name: string; type: FileType; size: number; bytesPath: string; downloadPath: string }[];
  /** Every file as one ZIP. */
  archivePath: string;
}

/** The cut's files, each with a player (audio) and its own download, and one "Download all". */
export function renderCutSharePage(view: CutSharePageView): string {
  const name = escapeHtml(view.name);
  const items = view.files.map((file) => {
    const player = file.type === 'CUT' ? `<audio controls preload="metadata" src="${escapeHtml(file.bytesPath)}"></audio>` : '';
    return `<li>
<p class="file">${escapeHtml(file.name)} <span class="meta">${capitalized(FILE_TYPE_LABELS[file.type])} · ${formatSize(file.size)}</span></p>
${player}
<a href="${escapeHtml(file.downloadPath)}" download>Download</a>
</li>`;
  });
  const count = view.files.length === 1 ? '1 file' : `${view.files.length} files`;
  const total = view.files.reduce((sum, file) => sum + file.size, 0);
  const expiry = view.expiresAt ? `<p class="expiry">This link works until ${view.expiresAt.toUTCString()}.</p>` : '';
  return htmlPage(
    `${name} · bandcollab`,
    `<h1>${name}</h1>
<p class="meta">${count} · ${formatSize(total)}</p>
<a class="download" href="${escapeHtml(view.archivePath)}" download>Download all</a>
<ul class="files">
${items.join('\n')}
</ul>
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
