import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { unavailable } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { sendHtml } from '../core/html-page.js';
import { sendJson } from '../core/http.js';
import { SERVER_VERSION } from '../version.js';
import { HOME_PAGE, HOME_PAGE_CSP } from './home-page.js';
import { openApiDocument } from './openapi.js';
import { renderReference } from './reference.js';
import { REFERENCE_PAGE_CSP, renderReferencePage } from './reference-page.js';
import { OperationsRepository } from './repository.js';

/** The Markdown reference and its page, made at the first request for them (see openApiDocument). */
function reference(): { markdown: string; page: string } {
  return (made ??= (() => {
    const markdown = renderReference(openApiDocument());
    return { markdown, page: renderReferencePage(markdown, `${openApiDocument().info.title} API reference`) };
  })());
}
let made: { markdown: string; page: string } | undefined;

/** Health check, the OpenAPI document and the reference made from it, and the root page: no authentication. */
@injectable()
export class OperationsRoutes implements Feature {
  constructor(@inject(OperationsRepository) private readonly repository: OperationsRepository) {}

  register(routes: Routes): void {
    routes.on(ROUTES.health, async () => {
      try {
        await this.repository.ping();
      } catch {
        throw unavailable('The database is unreachable');
      }
      return { status: 'ok', db: 'ok', version: SERVER_VERSION };
    });

    // The document is not one of the contract's records, so the declaration names no `response`.
    routes.on(ROUTES.openApi, async ({ res }) => {
      sendJson(res, 200, openApiDocument());
    });

    routes.on(ROUTES.home, async ({ req, res }) => {
      sendHtml(req, res, 200, HOME_PAGE, HOME_PAGE_CSP);
    });

    // A browser (which asks for text/html first) reads the page; anything else (curl, Accept: text/markdown) the Markdown.
    routes.on(ROUTES.reference, async ({ req, res }) => {
      res.setHeader('Vary', 'Accept');
      if (/^\s*text\/html\b/i.test(req.headers.accept ?? '')) {
        sendHtml(req, res, 200, reference().page, REFERENCE_PAGE_CSP);
        return;
      }
      const { markdown } = reference();
      res.writeHead(200, { 'Content-Type': 'text/markdown; charset=utf-8', 'Content-Length': Buffer.byteLength(markdown) });
      res.end(markdown);
    });
  }
}
