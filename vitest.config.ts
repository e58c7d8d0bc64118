import { chmodSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * The run's temporary files (test DATA_DIRs, the shared PostgreSQL cluster, the embedded ones, fixtures) go to
 * memory when /dev/shm has room for them: on this machine's disk a test database's copy took 270 ms, in memory
 * 29 ms, and `pnpm test` went from 216 s to 179-200 s. A run peaks at about 2.5 GB there, so less than 4 GiB
 * free (a container's 64 MiB /dev/shm), or a TMPDIR of the caller's, leaves TMPDIR as it is. Set here, before
 * the global setups and the workers start, it reaches every process of the run; the folder goes when the run
 * ends, with whatever a test left in it.
 */
function runInMemory(): void {
  if (process.env.TMPDIR) return;
  const free = (() => {
    try {
      const shm = statfsSync('/dev/shm');
      return shm.bavail * shm.bsize;
    } catch {
      return 0;
    }
  })();
  if (free < 4 * 1024 ** 3) return;
  const dir = mkdtempSync(join('/dev/shm', 'bandcollab-test-'));
  // As /tmp: the postgres user an embedded cluster runs as under root must reach the folders made in it.
  chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
}
runInMemory();

/** Ends the run with the plain 'N passed, N failed, N skipped' line that CI reads. */
const plainSummary: Reporter = {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const counts = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) counts[test.result().state] += 1;
    }
    // A file that failed outside its tests (an import, a beforeAll) leaves them skipped: it counts as a failure.
    const failedOutsideTests = (m: TestModule) => m.state() === 'failed' && ![...m.children.allTests()].some((test) => test.result().state === 'failed');
    const failedModules = testModules.filter(failedOutsideTests).length;
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed + failedModules} failed, ${counts.skipped} skipped\n`);
    // By name, after the count: CI prints these lines last, where a cut log still shows them.
    for (const module of testModules) {
      if (failedOutsideTests(module)) process.stdout.write(`Failed: ${relative(process.cwd(), module.moduleId)}\n`);
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'failed') continue;
        // The first line of its first error too: a CI log cut before the test's report still says why.
        const why = (result.errors?.[0]?.message ?? '').split('\n')[0]!.slice(0, 300);
        process.stdout.write(`Failed: ${relative(process.cwd(), module.moduleId)} > ${test.fullName}${why ? ` — ${why}` : ''}\n`);
      }
    }
  },
};

/**
 * The long reliability runs (a 40 s soak, slow clients, brute force, a login flood, kill -9 in the middle of an
 * analysis, a 62-minute preview's memory, 65,536 archive entries): minutes of load each, so `pnpm test` leaves them
 * to `pnpm test:reliability`; CI (.ci/run) runs both.
 */
const RELIABILITY = ['packages/server/test/reliability-*.test.ts', 'packages/server/test/archive-zip64.test.ts'];

/** Files about the S3 driver alone that move too many bytes to run on every Node major: `pnpm test:s3` only (a 500 MiB transfer). */
const S3_ONLY = ['packages/server/test/storage-s3-memory.test.ts'];

/**
 * `pnpm test:s3` (TEST_STORAGE=s3, in CI on one Node major): the tests of stored bytes once more, every test
 * server on the S3 driver (fauxqs on loopback, support/s3.ts). They see stored bytes only through
 * support/stored.ts. Left out, in files this list does not name, as about the local directory itself: the
 * free-disk floor, ENOSPC and file modes (storage-safety), tmp/ leftovers and the purge job (purge), DATA_DIR's
 * layout and ownership (data-dir).
 */
const S3_SUITE = [
  'packages/server/test/{files,files-download,files-streaming,uploads,uploads-crash,shares,cut-shares,archives,accounts,backup,projects-images}.test.ts',
  'packages/server/test/analysis/*.test.ts',
  'packages/server/test/reliability-analysis-kill.test.ts',
  ...S3_ONLY,
];

/** The files of the integration tests: each starts its servers on the PostgreSQL cluster the run shares. */
const integration = (name: string, include: string[], exclude: string[]) => ({
  extends: true,
  test: {
    name,
    include,
    exclude: [...exclude, '**/node_modules/**'],
    globalSetup: ['packages/server/test/support/global-setup.ts'],
    // Each worker process runs file after file with its module cache kept: each file no longer pays ~2 s to
    // start a process and load the server again. Test files keep no state in modules between them (each
    // starts its own servers and databases, and restores the umask it changes).
    isolate: false,
  },
});

/**
 * The SDK's tests of requests, sign-in and files again, through the fetch sender the web build uses (its
 * senders/default.web.ts in place of the Node build's undici one): `pnpm test` runs both transports.
 */
const sdkFetchProject = integration('sdk-fetch', ['packages/sdk/test/{transport,auth,files,request-options}.test.ts'], []);
const SDK_OVER_FETCH = {
  ...sdkFetchProject,
  test: { ...sdkFetchProject.test, setupFiles: ['packages/sdk/test/fetch-setup.ts'] },
  resolve: {
    alias: [{ find: /^\.\/senders\/default\.js$/, replacement: fileURLToPath(new URL('./packages/sdk/src/senders/default.web.ts', import.meta.url)) }],
  },
};

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@bandcollab\/sdk\/contract$/, replacement: fileURLToPath(new URL('./packages/sdk/src/contract/index.ts', import.meta.url)) },
      { find: /^@bandcollab\/sdk$/, replacement: fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One worker more than the cores, not vitest's one less: a worker spends much of its time waiting on the
    // processes its tests drive (PostgreSQL, servers, band, ffmpeg, Chromium). On two cores one worker left a
    // core idle, and two left a quarter of both idle (pnpm test, quiet machine: 247 s with two, 228 s with three).
    // `pnpm test:s3` keeps two: with three, uploads.test's slow-PATCH cut once met the server reading its first
    // 100 bytes only after the test had moved the clock on a minute (a race of the test's, docs/internals.md).
    maxWorkers: availableParallelism() + 1,
    reporters: ['default', plainSummary],
    // Pure logic runs without the PostgreSQL cluster the integration tests share. `pnpm test` runs unit,
    // integration and sdk-fetch, `pnpm test:reliability` the long runs.
    projects: [
      // Unit files share their worker's module cache too (a fresh process and module graph per file was a third
      // of the unit run); none keeps state between files (the one that stubs the environment unstubs it).
      { extends: true, test: { name: 'unit', include: ['packages/*/test/unit/**/*.test.ts'], isolate: false } },
      integration('integration', ['packages/*/test/**/*.test.ts'], ['packages/*/test/unit/**', ...RELIABILITY, ...S3_ONLY]),
      integration('reliability', RELIABILITY, []),
      SDK_OVER_FETCH,
      // Only under TEST_STORAGE=s3: otherwise `vitest run <file>` would run a file of the list twice, on fs both times.
      ...(process.env.TEST_STORAGE === 's3' ? [integration('s3', S3_SUITE, [])] : []),
    ],
  },
});
