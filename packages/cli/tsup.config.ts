import { createRequire } from 'node:module';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

const require = createRequire(import.meta.url);

/**
 * Node modules that a command loads when its code first reads one of their exports, not when a module that imports
 * them loads: a module imported at the top is loaded by every command, where `band project list` needs neither
 * crypto (new credentials, uploads' hashes), readline (prompts), child_process and worker_threads (the keychain,
 * $EDITOR, a browser). An ES module's `import` also makes the module's namespace, which reads every export
 * (node:crypto's webcrypto getter and the rest). Only modules whose exports are plain functions and values are
 * here: a stand-in is an object of getters, so it could not stand for a class (node:events, node:stream), an
 * emitter (node:process) or a module that dependencies patch (node:fs, under graceful-fs).
 * node:process is the global `process` (its namespace would read `process.report` and the rest).
 * test/startup.test.ts checks what `band project list` loads.
 */
const LAZY_BUILTINS = new Set(['crypto', 'child_process', 'readline', 'readline/promises', 'worker_threads', 'v8', 'util']);

const lazyBuiltins: Plugin = {
  name: 'lazy-node-builtins',
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (name === 'process') return { path: name, namespace: 'global-process' };
      return LAZY_BUILTINS.has(name) ? { path: name, namespace: 'lazy-node-builtin' } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'global-process' }, () => ({ loader: 'js', contents: 'module.exports = process;\n' }));
    build.onLoad({ filter: /.*/, namespace: 'lazy-node-builtin' }, (args) => {
      // The export names are the same in every Node band runs on; reading them here loads nothing in band.
      const names = Object.getOwnPropertyNames(require(`node:${args.path}`) as object).filter((name) => name !== 'default');
      const id = JSON.stringify(`node:${args.path}`);
      const getters = names.map((name) => `${JSON.stringify(name)}: { enumerable: true, get: () => load()[${JSON.stringify(name)}] }`);
      return {
        loader: 'js',
        contents: `let loaded;\nconst load = () => (loaded ??= process.getBuiltinModule(${id}));\nmodule.exports = Object.defineProperties({}, {\n  ${getters.join(',\n  ')}\n});\n`,
      };
    });
  },
};

// Dependencies are bundled (@napi-rs/keyring aside: it loads a native binary from a package of its own):
// resolving and loading hundreds of small files from node_modules (undici, ajv under conf) was a third of
// `band project list`'s start-up. The bundle's CommonJS parts need `require`, which an ES module does not
// have: the banner provides it. `pnpm build` empties dist/ first (the two builds below write it side by side).
export default defineConfig([
  {
    // run.js is what band.cjs imports for every command; the keychain worker is a file of its own (a worker
    // thread is started from a file); answers writes what band.cjs answers without loading a command group (the
    // version, the root help, completion scripts), once the build is done.
    entry: { run: 'src/run.ts', 'keychain-worker': 'src/keychain-worker.ts', answers: 'src/answers.ts' },
    onSuccess: 'node dist/answers.js',
    format: ['esm'],
    target: 'node22',
    sourcemap: true,
    splitting: true,
    noExternal: [/^(?!@napi-rs\/keyring$)/],
    external: ['@napi-rs/keyring'],
    // tsup's own plugin would mark every `node:` import external before lazyBuiltins sees it (the others stay
    // external with their `node:`).
    removeNodeProtocol: false,
    esbuildPlugins: [lazyBuiltins],
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __bandCreateRequire } from 'node:module';\nconst require = __bandCreateRequire(import.meta.url);",
    },
  },
  {
    // The entry, CommonJS (src/band.cts says why): Node's modules and run.js, which it imports, stay outside it.
    entry: { band: 'src/band.cts' },
    format: ['cjs'],
    target: 'node22',
    sourcemap: true,
    external: ['./run.js'],
    outExtension: () => ({ js: '.cjs' }),
    banner: { js: '#!/usr/bin/env node' },
  },
]);
