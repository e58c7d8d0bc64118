import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { band: 'src/band.ts' },
  format: ['esm'],
  target: 'node20',
  clean: true,
  sourcemap: true,
  splitting: true,
  external: ['keytar'],
  banner: { js: '#!/usr/bin/env node' },
});
