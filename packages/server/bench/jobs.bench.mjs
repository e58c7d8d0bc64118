// The job queue (src/core/jobs.ts, built as dist/core/jobs.js; `pnpm build` first) on the embedded PostgreSQL a
// built server starts and migrates: enqueue→start latency of single jobs on an idle queue, each committed on
// its own and woken by NOTIFY (targets p95 ≤ 100 ms, every one ≤ 1 s), then no-op jobs per second with 8 at
// once (target ≥ 500/s), from the commit of 5,000 jobs to the last one recorded done.
import 'reflect-metadata';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { JobQueue } = await import(path.resolve(here, '../dist/core/jobs.js'));
const { enqueue } = await import(path.resolve(here, '../dist/core/jobs-repository.js'));
const SINGLE_JOBS = 300;
const NOOP_JOBS = 5000;
const CONCURRENCY = 8;

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-jobs-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const dataDir = path.join(work, 'data');
let server;
const open = [];
try {
  server = await start(path.resolve(here, '../dist/main.js'), [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'error' });
  const { port } = JSON.parse(await readFile(path.join(dataDir, 'postgres-owner.json'), 'utf8'));
  const password = (await readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/bandcollab`;
  const options = { onnotice: () => undefined, transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } } };
  const sql = postgres(url, { ...options, max: 10 });
  const locks = postgres(url, { ...options, max: 1 });
  open.push(sql, locks);
  const silent = { debug() {}, info() {}, warn() {}, error() {}, enabled: () => false };
  const queue = new JobQueue({ sql, locks, log: silent, clock: { now: () => Date.now() } });
  const kind = (name) => ({ name, maxAttempts: 1, retry: { firstSeconds: 1, capSeconds: 1 }, fair: false });

  const latency = kind('bench_latency');
  const enqueuedAt = new Map();
  const waits = [];
  let started = null;
  queue.register(latency, async ({ payload }) => {
    waits.push(performance.now() - enqueuedAt.get(payload.n));
    started?.();
  }, { concurrency: 1 });
  const noop = kind('bench_noop');
  let ran = 0;
  queue.register(noop, async () => void (ran += 1), { concurrency: CONCURRENCY });
  await queue.start();

  for (let n = 0; n < SINGLE_JOBS; n += 1) {
    const startedOnce = new Promise((resolve) => (started = resolve));
    enqueuedAt.set(n, performance.now());
    await sql.begin((tx) => enqueue(tx, latency, { n }));
    await startedOnce;
    // Idle between jobs: each one meets a queue with nothing else to do.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const sorted = [...waits].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  report('job queue: enqueue→start, idle', { jobs: SINGLE_JOBS, p50Ms: round(at(0.5)), p95Ms: round(at(0.95)), maxMs: round(sorted.at(-1)), targetP95Ms: 100, met: at(0.95) <= 100 && sorted.at(-1) <= 1000 });

  await sql.begin(async (tx) => {
    for (let n = 0; n < NOOP_JOBS; n += 1) await enqueue(tx, noop, {});
  });
  const committed = performance.now();
  for (;;) {
    const [{ done }] = await sql`select count(*)::int as done from jobs where kind = 'bench_noop' and state = 'done'`;
    if (done === NOOP_JOBS) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const seconds = (performance.now() - committed) / 1000;
  report('job queue: no-op jobs', { jobs: NOOP_JOBS, concurrency: CONCURRENCY, seconds: round(seconds), jobsPerSecond: round(NOOP_JOBS / seconds), target: 500, met: NOOP_JOBS / seconds >= 500, ran });
  await queue.stop();
} finally {
  for (const connection of open) await connection.end({ timeout: 1 });
  if (server) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}
