import { htmlPage, PAGE_ICON_SRC, PAGE_STYLE_SRC } from '../core/html-page.js';
import { SERVER_VERSION } from '../version.js';

/** Nothing on the page comes from elsewhere or runs: only its one inline style, by hash. */
export const HOME_PAGE_CSP = ["default-src 'none'", PAGE_STYLE_SRC, PAGE_ICON_SRC, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join('; ');

/**
 * What someone who opens the server's address in a browser sees: this is an API (bandcollab has no web app of
 * its own), and where its reference is.
 */
export const HOME_PAGE = htmlPage(
  'bandcollab server',
  `<h1>bandcollab server</h1>
<p class="meta">version ${SERVER_VERSION}</p>
<p>This address serves the bandcollab API: bands share their takes, mixes and stems through the <code>band</code>
command line and the SDK.</p>
<p><a href="/api/reference">The API reference</a>, or <a href="/api/openapi.json">the OpenAPI document</a>.</p>`,
);
