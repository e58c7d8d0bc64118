/**
 * Query strings are declared once (a route's `query`: a zod object beside the feature's routes,
 * contract/routes/<feature>.ts): the server validates them before the handler, OpenAPI documents every declared
 * parameter, and no handler reads `req.query` itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RouteDeclaration, ROUTES } from '@bandcollab/sdk/contract';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../src/operations/openapi.js';
import { openApiPath } from '../src/operations/openapi-paths.js';

const SOURCE = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('query parameters, declared once', () => {
  it('no handler reads req.query: core/routes.ts hands it the declared, validated query', () => {
    const readers = sourceFiles(SOURCE).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (/\breq(uest)?\.query\b/.test(line) && !file.endsWith(join('core', 'routes.ts')) ? [`${file.slice(SOURCE.length)}:${index + 1}`] : [])),
    );
    expect(readers).toEqual([]);
  });

  it('every declared query parameter is an OpenAPI query parameter of its operation, and no other query parameter is', () => {
    const paths = openApiDocument().paths as Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
    for (const route of Object.values(ROUTES) as RouteDeclaration[]) {
      const documented = (paths[openApiPath(route.path)]![route.method.toLowerCase()]!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      const declared = route.query === undefined ? [] : Object.keys(route.query.shape);
      expect(documented.sort(), `${route.method} ${route.path}`).toEqual(declared.sort());
    }
  });

  it('query schemas live beside their routes: no contract module outside routes/ defines one', () => {
    const contract = fileURLToPath(new URL('../../sdk/src/contract', import.meta.url));
    const catalogued = readdirSync(contract)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        readFileSync(join(contract, name), 'utf8')
          .split('\n')
          .flatMap((line, index) => (/\b[A-Za-z]+Query\s*=\s*z\b/.test(line) ? [`${name}:${index + 1}`] : [])),
      );
    expect(catalogued).toEqual([]);
  });
});
