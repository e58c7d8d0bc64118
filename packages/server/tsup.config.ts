import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts'],
  format: ['esm'],
  target: 'node20',
  clean: true,
  sourcemap: true,
  // Dependencies stay external (tsup's default); the SDK is one too, so the server loads the contract's
  // values (FILE_TYPES) from the built SDK instead of bundling a second copy of it and its HTTP client.
  external: ['@bandcollab/sdk'],
});
