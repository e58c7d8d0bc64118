// CLI benchmarks against the built server and the built binary (the root `pnpm bench` builds first):
//  1. cold start: `band --version`, `band --help` and `band completion bash` (band.ts' fast path), every command
//     group's `--help` (what a command loads before its first request) and `band project list` (stored
//     credentials, a real request), each as a ratio over `node -e 0` measured in the same run (targets: the
//     fast path at most 1.2x, list at most 1.6x, the others at most 1.5x); beside `project list`, a bare
//     node:http script sending the same GET (bare-project-list.mjs), and for both the time from the spawn to
//     the first byte of the request on the server's socket (a TCP relay in front of the server sees it);
//  2. one large upload through `band file upload` against a bare undici + form-data client sending the same
//     file to the same server (throughput ratio, target at least 0.8). band sends a file this large as a
//     resumable upload, whose bytes the server makes durable (fsync) before it answers; the bare multipart
//     upload leaves them to the kernel. So every transfer starts after a `sync`, and none waits behind the
//     bytes an earlier one left unwritten;
//  3. 200 files of 1 MiB with --jobs 8 against one file of the same total size through the same CLI
//     (target at most 2x the time) and against --jobs 1 (target at least 2x faster).
// Transfers run BENCH_ROUNDS times, interleaved so background load hits them alike; medians are reported.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { chmod, mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, report, round, start } from '../../server/bench/support.mjs';
import { promisify } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const band = path.resolve(here, '../dist/band.cjs');
const serverMain = path.resolve(here, '../../server/dist/main.js');
const bareUpload = path.resolve(here, '../../sdk/bench/bare-upload-peak-rss.mjs');
const bareProjectList = path.resolve(here, 'bare-project-list.mjs');
const run = promisify(execFile);
const MiB = 1024 * 1024;
const STARTS = Number(process.env.BENCH_STARTS ?? 15);
const FILES = Number(process.env.BENCH_FILES ?? 200);
const LARGE_MIB = Number(process.env.BENCH_LARGE_MIB ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** One `--help` path per command group: what each command loads before it sends anything. */
const HELP_PATHS = [
  ['auth', 'login'],
  ['project', 'list'],
  ['member', 'list'],
  ['vibe', 'create'],
  ['cut', 'create'],
  ['file', 'upload'],
  ['share', 'list'],
  ['storage'],
  ['publish'],
  ['watch'],
  ['completion'],
];

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
  const credentials = { email: 'bench@example.com', password: 'bench-password' };
  await bandRun(['auth', 'register', '--email', credentials.email, '--name', 'Bench', '--password-stdin'], `${credentials.password}\n`);
  await bandRun(['project', 'create', 'Bench']);
  await bandRun(['vibe', 'create', 'Bench', '--project', 'Bench']);

  const startTasks = [
    ['node', () => run(process.execPath, ['-e', '0'])],
    ['version', () => run(process.execPath, [band, '--version'], { env })],
    ['help', () => run(process.execPath, [band, '--help'], { env })],
    ['completion', () => run(process.execPath, [band, 'completion', 'bash'], { env })],
    ...HELP_PATHS.map((args) => [`${args.join(' ')} --help`, () => run(process.execPath, [band, ...args, '--help'], { env })]),
    ['project list', () => run(process.execPath, [band, 'project', 'list'], { env })],
  ];
  const startMs = Object.fromEntries((await medianMs(startTasks.map(([, task]) => task))).map((ms, i) => [startTasks[i][0], ms]));

  // Time to the first request byte: band with credentials stored for the relay's address (they are bound to the
  // server that issued them), the bare script with an access token.
  const relay = await firstByteRelay(new URL(server.url));
  const relayEnv = { ...env, HOME: path.join(work, 'relay-home'), BAND_API_URL: relay.url };
  await new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [band, 'auth', 'login', '--email', credentials.email, '--password-stdin'], { env: relayEnv }, (error) => (error ? reject(error) : resolve()));
    child.stdin.end(`${credentials.password}\n`);
  });
  const { accessToken } = await call(server.url, 'POST', '/api/auth/login', undefined, credentials);
  const firstByteTasks = [
    ['node', () => run(process.execPath, ['-e', '0'])],
    ['bare', () => relay.timed(() => run(process.execPath, [bareProjectList, relay.url, accessToken]))],
    ['band', () => relay.timed(() => run(process.execPath, [band, 'project', 'list'], { env: relayEnv }))],
  ];
  const firstByte = await medianRuns(firstByteTasks.map(([, task]) => task));
  const [nodeRun, bareRun, bandListRun] = firstByte;
  relay.close();
  const helpRatios = Object.fromEntries(HELP_PATHS.map((args) => [args.join(' '), round(startMs[`${args.join(' ')} --help`] / startMs.node)]));
  report('cold start', {
    runs: STARTS,
    nodeMs: round(startMs.node),
    versionMs: round(startMs.version),
    projectListMs: round(startMs['project list']),
    versionRatioOverNode: round(startMs.version / startMs.node),
    helpRatioOverNode: round(startMs.help / startMs.node),
    completionRatioOverNode: round(startMs.completion / startMs.node),
    projectListRatioOverNode: round(startMs['project list'] / startMs.node),
    // The same, again, beside the bare node:http script (through the relay, in runs of their own).
    projectListBesideBare: {
      nodeMs: round(nodeRun.ms),
      bareMs: round(bareRun.ms),
      bandMs: round(bandListRun.ms),
      bareRatioOverNode: round(bareRun.ms / nodeRun.ms),
      bandRatioOverNode: round(bandListRun.ms / nodeRun.ms),
      bareFirstRequestByteMs: round(bareRun.firstByteMs),
      bandFirstRequestByteMs: round(bandListRun.firstByteMs),
      bandFirstRequestByteOverBare: round(bandListRun.firstByteMs / bareRun.firstByteMs),
    },
    worstCommandHelpRatioOverNode: Math.max(...Object.values(helpRatios)),
    commandHelpRatiosOverNode: helpRatios,
  });

  const large = path.join(work, 'large.zip');
  await writeFile(large, Buffer.from('PK\x03\x04', 'latin1'));
  await truncate(large, LARGE_MIB * MiB);
  const single = path.join(work, 'single.zip');
  await writeFile(single, Buffer.from('PK\x03\x04', 'latin1'));
  await truncate(single, FILES * MiB);
  const takes = path.join(work, 'takes');
  await mkdir(takes);
  for (let i = 0; i < FILES; i += 1) {
    const file = path.join(takes, `take-${i}.wav`);
    const header = Buffer.alloc(12);
    header.write('RIFF', 0, 'ascii');
    header.write('WAVE', 8, 'ascii');
    header.writeUInt32LE(i, 4); // distinct content per file
    await writeFile(file, header);
    await truncate(file, MiB);
  }

  let cuts = 0;
  /** A new cut for each upload, so names never clash; its id spares the CLI the name lookups. */
  const newCut = async () => JSON.parse(await bandRun(['cut', 'create', `cut ${++cuts}`, '--vibe', 'Bench', '--project', 'Bench', '--json'])).id;
  const timed = async (work) => {
    const started = performance.now();
    await work();
    return (performance.now() - started) / 1000;
  };
  const cliUpload = async (paths, jobs = 1) => {
    const cut = await newCut();
    return timed(() => bandRun(['file', 'upload', ...paths, '--cut', cut, '--jobs', String(jobs), '--no-progress', '--quiet']));
  };
  const bare = async () => {
    const cut = await newCut();
    const { accessToken } = await call(server.url, 'POST', '/api/auth/login', undefined, credentials);
    return timed(() => run(process.execPath, [bareUpload, server.url, accessToken, cut, large]));
  };
  const tasks = {
    largeBare: bare,
    largeCli: () => cliUpload(['large.zip']),
    singleCli: () => cliUpload(['single.zip']),
    jobs8: () => cliUpload(['takes/*.wav'], 8),
    jobs1: () => cliUpload(['takes/*.wav'], 1),
  };
  const seconds = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
  for (let i = 0; i < ROUNDS; i += 1) {
    for (const [name, task] of Object.entries(tasks)) {
      await run('sync');
      seconds[name].push(await task());
    }
  }
  const s = Object.fromEntries(Object.entries(seconds).map(([name, list]) => [name, median(list)]));
  report('large upload', {
    rounds: ROUNDS,
    sizeMiB: LARGE_MIB,
    bareSeconds: round(s.largeBare),
    cliSeconds: round(s.largeCli),
    bareMBps: round((LARGE_MIB * MiB) / s.largeBare / 1e6),
    cliMBps: round((LARGE_MIB * MiB) / s.largeCli / 1e6),
    throughputRatioCliOverBare: round(s.largeBare / s.largeCli),
  });
  report('bulk upload', {
    rounds: ROUNDS,
    files: FILES,
    fileMiB: 1,
    singleFileSeconds: round(s.singleCli),
    jobs8Seconds: round(s.jobs8),
    jobs1Seconds: round(s.jobs1),
    timeRatioJobs8OverSingleFile: round(s.jobs8 / s.singleCli),
    speedupJobs8OverJobs1: round(s.jobs1 / s.jobs8),
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
  return times.map(median);
}

/**
 * A TCP relay to `target` that notes when the first byte of a connection arrives; `timed(start)` runs a process
 * and answers its wall time and the time from its start to the first byte of its first connection.
 */
async function firstByteRelay(target) {
  let firstByteAt;
  const relay = net.createServer((socket) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    socket.once('data', () => (firstByteAt ??= performance.now()));
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${relay.address().port}`,
    timed: async (start) => {
      firstByteAt = undefined;
      const started = performance.now();
      await start();
      return { ms: performance.now() - started, firstByteMs: firstByteAt - started };
    },
    close: () => relay.close(),
  };
}

/** medianMs for tasks that answer { ms, firstByteMs } (or nothing: then their wall time): medians of each. */
async function medianRuns(tasks) {
  for (const task of tasks) await task();
  const runs = tasks.map(() => []);
  for (let i = 0; i < STARTS; i += 1) {
    for (const [index, task] of tasks.entries()) {
      const started = performance.now();
      const answer = await task();
      runs[index].push(answer?.ms === undefined ? { ms: performance.now() - started } : answer);
    }
  }
  return runs.map((list) => ({ ms: median(list.map((r) => r.ms)), firstByteMs: median(list.map((r) => r.firstByteMs ?? NaN)) }));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
