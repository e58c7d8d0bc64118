import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The human pages (`/share/:token`, `/invite/:token`): one look, nothing from elsewhere. */
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
.player { margin: 0 0 1.5rem; }
.player audio { margin: .75rem 0 0; }
.wave { position: relative; height: 6rem; margin-top: 1rem; border-radius: 8px; background: #f0f0fb; cursor: pointer; }
.wave.bare { height: 2.5rem; }
.waveform { display: block; width: 100%; height: 100%; }
.playhead { position: absolute; top: 0; bottom: 0; left: 0; width: 2px; margin-left: -1px; background: #e4572e; pointer-events: none; }
.markers { position: absolute; left: 0; right: 0; top: 0; bottom: 0; pointer-events: none; }
.marker { position: absolute; top: -1.05rem; width: .9rem; height: .9rem; margin-left: -.45rem; padding: 0; border: 2px solid #fff; border-radius: 50% 50% 50% 0; transform: rotate(-45deg); background: #f2a516; box-shadow: 0 1px 3px #0004; cursor: pointer; pointer-events: auto; }
.marker.range { border-radius: 4px; transform: none; margin-left: 0; height: .45rem; top: -.7rem; min-width: .9rem; background: #f2a516cc; }
.marker:hover, .marker.active { background: #e4572e; z-index: 1; }
.marker::after { content: ''; position: absolute; left: 50%; top: 100%; }
.marker-note { margin: .6rem 0 0; padding: .5rem .75rem; border-left: 3px solid #e4572e; border-radius: 4px; background: #fff6e8; overflow-wrap: anywhere; }
.marker-note .time, .comment .time { font-variant-numeric: tabular-nums; }
.marker-note .author { margin: 0 .5rem; }
.feedback { margin: 0 0 1.5rem; }
.feedback h2 { margin: 0 0 .5rem; font-size: 1.1rem; }
.feedback .count { display: inline-block; min-width: 1.5rem; padding: 0 .4rem; border-radius: 999px; background: #ececf4; font-size: .85rem; text-align: center; }
.empty { color: #5b5b66; }
.comments, .replies { list-style: none; margin: 0; padding: 0; }
.comment { padding: .6rem .75rem; border-radius: 8px; border: 1px solid #e6e6ee; margin: 0 0 .5rem; }
.comment.active { border-color: #e4572e; background: #fffaf3; }
.comment .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: .5rem; }
.comment button.time { padding: .1rem .45rem; border: 0; border-radius: 4px; background: #f2a516; color: #1d1d24; font: inherit; font-size: .85rem; font-weight: 600; cursor: pointer; }
.comment .time.whole { padding: .1rem .45rem; border-radius: 4px; background: #ececf4; font-size: .85rem; }
.comment .author { font-weight: 600; overflow-wrap: anywhere; }
.badge { padding: 0 .4rem; border-radius: 4px; background: #ececf4; color: #5b5b66; font-size: .75rem; }
.badge.resolved { background: #dff3e4; color: #1f6b35; }
.comment .body { margin: .3rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.comment .body.deleted { color: #8b8b96; font-style: italic; }
.replies { margin: .4rem 0 0 1rem; padding-left: .75rem; border-left: 2px solid #e6e6ee; }
.comment-form { margin: 1rem 0 0; padding: 1rem; border-radius: 8px; background: #f7f7fa; }
.comment-form label { display: block; font-size: .85rem; color: #5b5b66; }
.comment-form .row { display: flex; flex-wrap: wrap; align-items: end; gap: .75rem; }
.comment-form .name { flex: 1 1 10rem; }
.comment-form .at input, .comment-form .end input { width: 6rem; font-variant-numeric: tabular-nums; }
.comment-form input, .comment-form textarea { display: block; box-sizing: border-box; width: 100%; margin: .2rem 0 0; padding: .45rem .6rem; border: 1px solid #d3d3de; border-radius: 6px; font: inherit; color: #1d1d24; background: #fff; }
.comment-form .body { margin: .5rem 0 .75rem; }
.comment-form .help { margin: .4rem 0 0; font-size: .8rem; color: #6b6b76; }
.comment-form button { padding: .5rem 1rem; border: 0; border-radius: 8px; background: #3b3bd6; color: #fff; font: inherit; cursor: pointer; }
.comment-form button.end-here { padding: .45rem .7rem; background: #e2e2ef; color: #1d1d24; font-size: .85rem; }
.comment-form button:disabled { opacity: .6; }
.form-error { color: #b3261e; }
pre { padding: .75rem 1rem; border-radius: 8px; background: #f4f4f6; white-space: pre-wrap; overflow-wrap: anywhere; }
`;

/**
 * The pages' icon, inline: without one a browser asks for /favicon.ico, which no route answers (a 404 per page
 * view in the log). Two beamed notes, white on the pages' accent colour.
 */
const ICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#3b3bd6"/>' +
    '<path d="M12 9l12-3v15a3.5 3.5 0 1 1-2-3.2V10.6l-8 2V23a3.5 3.5 0 1 1-2-3.2z" fill="#fff"/></svg>',
)}`;
/** The policy's source for the icon: a page's policy lists it beside its own. */
export const PAGE_ICON_SRC = 'img-src data:';

/** The policy's source for a page's one inline style, by its hash. */
export const styleSource = (style: string): string => `style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`;
export const PAGE_STYLE_SRC = styleSource(STYLE);

/** `title` and `content` are HTML: every text in them must already have passed through escapeHtml. */
export function htmlPage(title: string, content: string, style: string = STYLE): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="${ICON}">
<style>${style}</style>
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
