import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The human pages (`/share/:token`, `/invite/:token`): one look, no scripts, nothing from elsewhere. */
const STYLE = `
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; background: #f4f4f6; color: #1d1d24; }
main { max-width: 40rem; margin: 4rem auto; padding: 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 4px #0002; }
h1 { margin: 0 0 .25rem; font-size: 1.4rem; overflow-wrap: anywhere; }
.meta { margin: 0 0 1.5rem; color: #5b5b66; }
audio, img { display: block; width: 100%; margin: 0 0 1.5rem; }
img { height: auto; border-radius: 8px; }
.download { display: inline-block; padding: .6rem 1.2rem; border-radius: 8px; background: #3b3bd6; color: #fff; text-decoration: none; }
.files { list-style: none; padding: 0; margin: 1.5rem 0 0; }
.files li { margin: 0 0 1.25rem; }
.file { margin: 0 0 .5rem; font-weight: 600; overflow-wrap: anywhere; }
.expiry { margin: 1.5rem 0 0; font-size: .875rem; color: #5b5b66; }
.waveform { display: block; width: 100%; height: 6rem; margin: 0 0 1rem; cursor: pointer; }
pre { padding: .75rem 1rem; border-radius: 8px; background: #f4f4f6; white-space: pre-wrap; overflow-wrap: anywhere; }
`;

/** The policy's source for the pages' one inline style, by its hash. */
export const PAGE_STYLE_SRC = `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/** `title` and `content` are HTML: every text in them must already have passed through escapeHtml. */
export function htmlPage(title: string, content: string): string {
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

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A page's URL holds its token: no referrer carries it elsewhere, no cache keeps the page. */
export function sendHtml(req: IncomingMessage, res: ServerResponse, status: number, html: string, csp: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : html);
}
