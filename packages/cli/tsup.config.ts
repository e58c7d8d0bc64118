import { defineConfig } from 'tsup';

// Dependencies are bundled (keytar aside: a native module): resolving and loading hundreds of small files
// from node_modules (undici, ajv under conf) was a third of `band project list`'s start-up. The bundle's
// CommonJS parts need `require`, which an ES module does not have: the banner provides it.
export default defineConfig({
  entry: { band: 'src/band.ts' },
  format: ['esm'],
  target: 'node20',
  clean: true,
  sourcemap: true,
  splitting: true,
  noExternal: [/^(?!keytar$)/],
  external: ['keytar'],
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __bandCreateRequire } from 'node:module';\nconst require = __bandCreateRequire(import.meta.url);",
  },
});
