import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../src/operations/openapi.js';
import { renderReference } from '../src/operations/reference.js';
import { REPO_ROOT } from './support/repo-copy.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('the API reference', () => {
  it('docs/API.md is the reference generated from the OpenAPI document (run `pnpm docs:api` after changing it)', async () => {
    expect(await readFile(path.join(REPO_ROOT, 'docs/API.md'), 'utf8')).toBe(renderReference(openApiDocument()));
  });

  it('is served beside the OpenAPI document as Markdown, listing every path of it', async () => {
    const response = await fetch(`${server.url}/api/reference`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const text = await response.text();
    expect(text).toBe(renderReference(openApiDocument()));
    for (const [route, item] of Object.entries(openApiDocument().paths)) {
      for (const method of Object.keys(item).filter((key) => key !== 'parameters')) expect(text).toContain(`### ${method.toUpperCase()} ${route}\n`);
    }
  });

  it('is an HTML page for a browser (Accept: text/html first), rendered from the same Markdown; Markdown otherwise', async () => {
    const html = await fetch(`${server.url}/api/reference`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('vary')).toContain('Accept');
    expect(html.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await html.text();
    expect(page).toContain('<h3>GET /api/projects</h3>');
    expect(page).not.toMatch(/<id>/);
    const markdown = await fetch(`${server.url}/api/reference`, { headers: { accept: 'text/markdown' } });
    expect(markdown.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
  });

  it('is what the server root points people to: / answers a small HTML page linking it, not a JSON 404', async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await response.text();
    expect(page).toContain('<a href="/api/reference">');
    expect(page).toContain('<a href="/api/openapi.json">');
    const head = await fetch(`${server.url}/`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('is linked from the README, which links nothing outside the repository', async () => {
    const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme.slice(0, 2500)).toContain('](docs/API.md)');
    expect(readme).not.toMatch(/\]\(\.\.\//);
    expect(readme).not.toContain('shared/API.md');
  });
});
