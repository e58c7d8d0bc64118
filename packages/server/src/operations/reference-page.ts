import { Marked } from 'marked';
import { escapeHtml, htmlPage, PAGE_ICON_SRC, styleSource } from '../core/html-page.js';

// The API reference for a browser: the Markdown reference (reference.ts, from the OpenAPI document) rendered
// by marked into one self-contained page. Raw HTML in the Markdown (a `<id>` placeholder outside code) is
// shown as text, never markup.

const STYLE = `
body { margin: 0; font: 15px/1.55 system-ui, sans-serif; background: #f4f4f6; color: #1d1d24; }
main { max-width: 60rem; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 4px #0002; }
h1, h2, h3 { line-height: 1.25; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ddd; } h3 { margin-top: 2rem; font-family: ui-monospace, monospace; font-size: 1rem; }
code { font: .9em ui-monospace, monospace; background: #f4f4f6; padding: 0 .2em; border-radius: 4px; overflow-wrap: anywhere; }
pre { padding: .75rem 1rem; border-radius: 8px; background: #f4f4f6; overflow-x: auto; } pre code { padding: 0; }
table { border-collapse: collapse; margin: .5rem 0 1rem; display: block; overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: .3rem .5rem; text-align: left; vertical-align: top; }
`;

/** Nothing on the page comes from elsewhere or runs: only its one inline style, by hash. */
export const REFERENCE_PAGE_CSP = [
  "default-src 'none'",
  styleSource(STYLE),
  PAGE_ICON_SRC,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const markdown = new Marked({ renderer: { html: ({ text }) => escapeHtml(text) } });

export function renderReferencePage(reference: string, title: string): string {
  return htmlPage(escapeHtml(title), markdown.parse(reference, { async: false }), STYLE);
}
