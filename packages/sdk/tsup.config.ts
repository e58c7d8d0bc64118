import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';
import { ROUTES } from './src/contract/routes.js';

/** What the SDK reads of a route declaration at run time; the rest (summaries, OpenAPI extras) documents it. */
const RUNTIME_ROUTE_FIELDS = ['method', 'path', 'auth', 'status', 'request', 'form', 'optionalBody', 'sdk'] as const;

/**
 * The route table as its run-time fields, without the HTML pages for people (produces html: the share,
 * invitation, reset and unsubscribe pages), which no SDK method calls: what a client reads to send a request,
 * without the documentation.
 */
function runtimeRouteTable(): string {
  const routes = Object.fromEntries(
    Object.entries(ROUTES)
      .filter(([, route]) => !('produces' in route && route.produces === 'html'))
      .map(([name, route]) => [
        name,
        {
          ...Object.fromEntries(RUNTIME_ROUTE_FIELDS.filter((field) => field in route).map((field) => [field, (route as Record<string, unknown>)[field]])),
          // That it takes a query, not its zod schema: a method made from the declaration passes one on (route-methods.ts).
          ...('query' in route ? { query: true } : {}),
        },
      ]),
  );
  return `export const ROUTES = ${JSON.stringify(routes)};`;
}

/**
 * The assembled table (contract/routes.ts): replacing it leaves out the feature tables it assembles
 * (contract/routes/<feature>.ts) and their prose, which nothing else in a client imports.
 */
const isRouteTable = (resolved: string) => resolved.endsWith(`${path.sep}contract${path.sep}routes.js`);

/**
 * The Node client (dist/index.js, which the CLI bundles): the route table by its run-time fields, so the
 * OpenAPI prose does not load with every command (the server, and apps that want the schemas and the
 * documentation, import `@bandcollab/sdk/contract`, built whole).
 */
export const runtimeRoutes: Plugin = {
  name: 'bandcollab-runtime-routes',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      const resolved = path.resolve(args.resolveDir, args.path);
      return isRouteTable(resolved) ? { path: resolved, namespace: 'runtime-routes' } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'runtime-routes' }, () => ({ contents: runtimeRouteTable(), loader: 'js' }));
  },
};

/**
 * The web build: a module with a `.web.ts` sibling (multipart, download, resumable, the events socket, the
 * default sender) is replaced by it, and the route table by its run-time fields, so the bundle has no node:*
 * module, no undici or form-data, and no documentation.
 */
export const webModules: Plugin = {
  name: 'bandcollab-web-modules',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      const resolved = path.resolve(args.resolveDir, args.path);
      if (isRouteTable(resolved)) return { path: resolved, namespace: 'runtime-routes' };
      const web = resolved.replace(/\.js$/, '.web.ts');
      return existsSync(web) ? { path: web } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'runtime-routes' }, () => ({ contents: runtimeRouteTable(), loader: 'js' }));
  },
};

export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    target: 'node22',
    dts: true,
    clean: true,
    sourcemap: true,
    esbuildPlugins: [runtimeRoutes],
  },
  {
    // Whole: the schemas and the documentation the server and the OpenAPI document are made from.
    entry: { 'contract/index': 'src/contract/index.ts' },
    format: ['esm', 'cjs'],
    target: 'node22',
    dts: true,
    sourcemap: true,
  },
  {
    // Browsers, Deno, Bun, Workers: fetch and Web streams (package.json `exports` conditions choose it).
    entry: { web: 'src/web.ts' },
    format: ['esm'],
    platform: 'browser',
    target: 'es2022',
    // The declarations the same way: TypeScript resolves `./multipart.js` to multipart.web.ts where there is one,
    // in a program without Node's types (a Node type reaching web.d.ts fails the build).
    dts: { compilerOptions: { moduleSuffixes: ['.web', ''], types: [], lib: ['ES2022', 'DOM', 'DOM.Iterable'] } },
    sourcemap: true,
    esbuildPlugins: [webModules],
  },
]);
