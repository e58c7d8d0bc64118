// CLI benchmarks against the built server and the built binary (the root `pnpm bench` builds first):
//  1. cold start of `band --version` and of `band project list` (stored credentials, a real request),
//     each as a ratio over `node -e 0` measured in the same run (target for --version: at most 2x);
//  2. a bulk upload of 200 files of 1 MiB with --jobs 8 against --jobs 1 (the speed-up, as a ratio).
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { report, round, start } from '../../server/bench/support.mjs';
import { promisify } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const band = path.resolve(here, '../dist/band.js');
const serverMain = path.resolve(here, '../../server/dist/main.js');
const run = promisify(execFile);
const MiB = 1024 * 1024;
const STARTS = Number(process.env.BENCH_STARTS ?? 15);
const FILES = Number(process.env.BENCH_FILES ?? 200);

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-cli-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
const env = { PATH: process.env.PATH, HOME: path.join(work, 'home'), BAND_API_URL: server.url };
const bandRun = (args, input) =>
  new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [band, ...args], { env, cwd: work, maxBuffer: 64 * MiB }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
    child.stdin.end(input ?? '');
  });
try {
  await bandRun(['auth', 'register', '--email', 'bench@example.com', '--name', 'Bench', '--password-stdin'], 'bench-password\n');
  await bandRun(['project', 'create', 'Bench']);
  await bandRun(['vibe', 'create', 'Bench', '--project', 'Bench']);

  const [baseline, version, list] = await medianMs([
    () => run(process.execPath, ['-e', '0']),
    () => run(process.execPath, [band, '--version'], { env }),
    () => run(process.execPath, [band, 'project', 'list'], { env }),
  ]);
  report('cold start', {
    runs: STARTS,
    nodeMs: round(baseline),
    versionMs: round(version),
    projectListMs: round(list),
    versionRatioOverNode: round(version / baseline),
    projectListRatioOverNode: round(list / baseline),
  });

  const files = path.join(work, 'takes');
  await mkdir(files);
  for (let i = 0; i < FILES; i += 1) {
    const file = path.join(files, `take-${i}.wav`);
    const header = Buffer.alloc(12);
    header.write('RIFF', 0, 'ascii');
    header.write('WAVE', 8, 'ascii');
    header.writeUInt32LE(i, 4); // distinct content per file
    await writeFile(file, header);
    await truncate(file, MiB);
  }
  const upload = async (jobs) => {
    const cut = `jobs ${jobs}`;
    await bandRun(['cut', 'create', cut, '--vibe', 'Bench', '--project', 'Bench']);
    const started = performance.now();
    await bandRun(['file', 'upload', 'takes/*.wav', '--cut', cut, '--vibe', 'Bench', '--project', 'Bench', '--jobs', String(jobs), '--no-progress', '--quiet']);
    return performance.now() - started;
  };
  const serial = await upload(1);
  const parallel = await upload(8);
  report('bulk upload', {
    files: FILES,
    fileMiB: 1,
    jobs1Seconds: round(serial / 1000),
    jobs8Seconds: round(parallel / 1000),
    speedupJobs8OverJobs1: round(serial / parallel),
  });
} finally {
  server.process.kill('SIGTERM');
  await once(server.process, 'exit');
  await rm(work, { recursive: true, force: true });
}

/** Median wall times of STARTS runs of each task, interleaved so background load hits them alike. */
async function medianMs(tasks) {
  for (const task of tasks) await task(); // warm the OS file cache, not the process
  const times = tasks.map(() => []);
  for (let i = 0; i < STARTS; i += 1) {
    for (const [index, task] of tasks.entries()) {
      const started = performance.now();
      await task();
      times[index].push(performance.now() - started);
    }
  }
  return times.map((list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)]);
}
