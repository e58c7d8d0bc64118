/**
 * Conventions of the server's source, read from the files: what the server may load from the SDK package,
 * what its services may know of HTTP, and which way the layers of a feature depend on each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOURCE = fileURLToPath(new URL('../../src', import.meta.url));

const sourceFiles = (): string[] =>
  readdirSync(SOURCE, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split('\\').join('/'))
    .sort();

/** The modules a file imports or re-exports, statically or dynamically. */
const isService = (file: string): boolean => /(^|\/|-)service\.ts$/.test(file);
const isRoutes = (file: string): boolean => /(^|\/|-)(routes|forms)\.ts$/.test(file);
const isRepository = (file: string): boolean => /(^|\/|-)repository\.ts$/.test(file);

/** The source file a relative import names, from the importing file ('' for a package). */
const resolved = (file: string, module: string): string =>
  module.startsWith('.') ? join(file, '..', module).split('\\').join('/').replace(/\.js$/, '.ts') : '';

const importsOf = (file: string): string[] =>
  [...readFileSync(join(SOURCE, file), 'utf8').matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);

describe('the server source', () => {
  it('takes contract types and values from @bandcollab/sdk/contract only, never the client SDK (which loads undici)', () => {
    const offenders = sourceFiles().flatMap((file) =>
      importsOf(file)
        .filter((module) => module.startsWith('@bandcollab/sdk') && module !== '@bandcollab/sdk/contract')
        .map((module) => `${file} imports ${module}`),
    );
    expect(sourceFiles().length).toBeGreaterThan(20);
    expect(offenders).toEqual([]);
  });

  it('keeps HTTP out of services: they take typed inputs and return domain results, the routes read and answer', () => {
    const services = sourceFiles().filter(isService);
    const http = ['@tinyhttp/app', 'node:http', '../core/http.js', './http.js'];
    const offenders = services.flatMap((file) =>
      importsOf(file)
        .filter((module) => http.includes(module))
        .map((module) => `${file} imports ${module}`),
    );
    expect(services).toContain('files/service.ts');
    expect(services).toContain('auth/idp-service.ts');
    expect(offenders).toEqual([]);
  });

  it('lets dependencies run one way, routes → service → repository: a repository imports no service or routes, a service no routes', () => {
    const offenders = sourceFiles().flatMap((file) =>
      importsOf(file)
        .map((module) => resolved(file, module))
        .filter((target) => (isRepository(file) && (isService(target) || isRoutes(target))) || (isService(file) && isRoutes(target)))
        .map((target) => `${file} imports ${target}`),
    );
    expect(sourceFiles().filter(isRepository)).toContain('files/repository.ts');
    expect(offenders).toEqual([]);
  });
});
