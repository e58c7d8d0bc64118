import { createHash } from 'node:crypto';
import type { FileType } from '@bandcollab/sdk';

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

const STYLE = `
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; background: #f4f4f6; color: #1d1d24; }
main { max-width: 40rem; margin: 4rem auto; padding: 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 4px #0002; }
h1 { margin: 0 0 .25rem; font-size: 1.4rem; overflow-wrap: anywhere; }
.meta { margin: 0 0 1.5rem; color: #5b5b66; }
audio, img { display: block; width: 100%; margin: 0 0 1.5rem; }
img { height: auto; border-radius: 8px; }
.download { display: inline-block; padding: .6rem 1.2rem; border-radius: 8px; background: #3b3bd6; color: #fff; text-decoration: none; }
.expiry { margin: 1.5rem 0 0; font-size: .875rem; color: #5b5b66; }
`;

/**
 * No scripts, and nothing from another origin: the policy allows exactly this page's inline style (by its
 * hash) and the shared bytes from this server.
 */
export const SHARE_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'self'",
  "media-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPE_LABELS: Record<FileType, string> = { CUT: 'Audio', STEM: 'Stems', IMAGE: 'Image' };

export function renderSharePage(view: SharePageView): string {
  const name = escapeHtml(view.name);
  const preview =
    view.type === 'CUT'
      ? `<audio controls preload="metadata" src="${escapeHtml(view.bytesPath)}"></audio>`
      : view.type === 'IMAGE'
        ? `<img src="${escapeHtml(view.bytesPath)}" alt="${name}">`
        : '';
  const expiry = view.expiresAt ? `<p class="expiry">This link works until ${view.expiresAt.toUTCString()}.</p>` : '';
  return page(
    `${name} · bandcollab`,
    `<h1>${name}</h1>
<p class="meta">${TYPE_LABELS[view.type]} (${view.type}) · ${formatSize(view.size)}</p>
${preview}
<a class="download" href="${escapeHtml(view.downloadPath)}" download>Download</a>
${expiry}`,
  );
}

export function renderNotFoundPage(): string {
  return page(
    'Link not found · bandcollab',
    `<h1>Link not found</h1>
<p class="meta">This share link does not exist, has expired or was revoked.</p>`,
  );
}

function page(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${content}
</main>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** 1,536 → "1.5 KiB (1536 bytes)": readable, and exact as the API gives it; sizes under 1 KiB in bytes only. */
function formatSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]} (${bytes} bytes)`;
}
