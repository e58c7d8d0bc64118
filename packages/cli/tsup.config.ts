import { defineConfig } from 'tsup';

// Dependencies are bundled (@napi-rs/keyring aside: it loads a native binary from a package of its own):
// resolving and loading hundreds of small files from node_modules (undici, ajv under conf) was a third of
// `band project list`'s start-up. The bundle's CommonJS parts need `require`, which an ES module does not
// have: the banner provides it.
export default defineConfig({
  // The keychain worker is a file of its own: a worker thread is started from a file. completion-tree writes
  // the command tree that `band completion` reads (src/completion-scripts.ts), once the build is done.
  entry: { band: 'src/band.ts', 'keychain-worker': 'src/keychain-worker.ts', 'completion-tree': 'src/completion-tree.ts' },
  onSuccess: 'node dist/completion-tree.js > dist/completion-tree.json',
  format: ['esm'],
  target: 'node22',
  clean: true,
  sourcemap: true,
  splitting: true,
  noExternal: [/^(?!@napi-rs\/keyring$)/],
  external: ['@napi-rs/keyring'],
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __bandCreateRequire } from 'node:module';\nconst require = __bandCreateRequire(import.meta.url);",
  },
});
