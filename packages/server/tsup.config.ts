import { defineConfig } from 'tsup';

export default defineConfig({
  // The analysis engine is an entry of its own too: its benchmark runs it alone in a process (dist/analysis/);
  // so is the preview encoder (dist/previews/, bench/previews.bench.mjs).
  // So is the analysis job, which the server runs in a worker thread (src/analysis/isolated.ts), and the job
  // queue, which its benchmark (bench/jobs.bench.mjs) runs with no-op handlers of its own.
  entry: ['src/main.ts', 'src/analysis/index.ts', 'src/analysis/job.ts', 'src/analysis/preview-encode.ts', 'src/core/jobs.ts', 'src/core/jobs-repository.ts'],
  format: ['esm'],
  target: 'node22',
  clean: true,
  sourcemap: true,
  // Dependencies stay external (tsup's default); the SDK is one too, so the server loads the contract's
  // schemas from the built SDK's `@bandcollab/sdk/contract` subpath, and never the client (undici) itself.
  external: ['@bandcollab/sdk'],
});
