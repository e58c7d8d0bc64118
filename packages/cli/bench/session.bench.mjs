// Session folders (§16, issue 28) against the built server and the built binary (the root `pnpm bench` builds
// first), each figure beside its baseline in the same run:
//  a) a second `band push` of an unchanged session (BENCH_SESSION_FILES files, BENCH_SESSION_MIB in all, one of
//     them a BENCH_TAKE_MIB take): wall time (target < 1 s) over `band --version`'s, the bytes the server read
//     from its sockets (/proc/PID/io rchar: what was sent to it, requests included) and the bytes the push read
//     (its own rchar, through a preloaded probe) over the session's size (target: no file read, 0 bytes sent);
//  b) a push after changing the take against `band file upload` of that take to a new cut (target ≤ 1.2×);
//  c) a first push of 200 × 1 MiB against `band file upload --jobs 8` of the same files, both with 8 jobs
//     (target ≤ 1.1×);
//  d) a 2 GiB WAV through `band file upload`, the server's RSS sampled every 100 ms (target: flat).
// Files are sparse (a distinct header, then zeros), so the disk is not what is measured; every transfer starts
// after a `sync`. ANALYSIS_CONCURRENCY=0: the analysis of what arrives is another bench's business. a) to c) run
// BENCH_ROUNDS times (default 3), each figure beside its baseline in the same round; medians are reported.
import { execFile, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, open, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, memory, report, round, start } from '../../server/bench/support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const band = path.resolve(here, '../dist/band.cjs');
const serverMain = path.resolve(here, '../../server/dist/main.js');
const ioProbe = path.resolve(here, '../test/support/io-probe.mjs');
const MiB = 1024 * 1024;
const SESSION_FILES = Number(process.env.BENCH_SESSION_FILES ?? 1000);
const SESSION_MIB = Number(process.env.BENCH_SESSION_MIB ?? 2048);
const TAKE_MIB = Number(process.env.BENCH_TAKE_MIB ?? 300);
const CLIPS = 200;
const LARGE_MIB = Number(process.env.BENCH_SESSION_LARGE_MIB ?? 2048);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-session-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error', ANALYSIS_CONCURRENCY: '0' });
const env = { PATH: process.env.PATH, HOME: path.join(work, 'home'), BAND_API_URL: server.url };

/** Runs band; answers its stdout and stderr. */
const bandRun = (args, { input, extraEnv } = {}) =>
  new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [band, ...args], { env: { ...env, ...extraEnv }, cwd: work, maxBuffer: 64 * MiB }, (error, stdout, stderr) =>
      error ? reject(new Error(`band ${args.join(' ')}: ${error.message}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
    child.stdin.end(input ?? '');
  });
const serverRead = async () => Number(/rchar: (\d+)/.exec(await readFile(`/proc/${server.process.pid}/io`, 'utf8'))[1]);
const timed = async (work) => {
  execFileSync('sync');
  const started = performance.now();
  const result = await work();
  return { result, seconds: (performance.now() - started) / 1000 };
};
let cuts = 0;
/** A new cut, so names never clash; its id spares band the name lookups. */
const newCut = async () => JSON.parse((await bandRun(['cut', 'create', `cut ${++cuts}`, '--vibe', 'Bench', '--project', 'Bench', '--json'])).stdout).id;
/** A sparse WAV: a header telling files apart, then zeros up to `size`. */
async function wav(file, size, seed) {
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(seed, 4);
  header.write('WAVE', 8, 'ascii');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, header);
  await truncate(file, size);
}

try {
  await bandRun(['auth', 'register', '--email', 'bench@example.com', '--name', 'Bench', '--password-stdin'], { input: 'bench-password\n' });
  await bandRun(['project', 'create', 'Bench']);
  await bandRun(['vibe', 'create', 'Bench', '--project', 'Bench']);

  // a) The session: one take, the rest in equal clips over 10 folders.
  const session = path.join(work, 'session');
  const take = path.join(session, 'Audio/Take.wav');
  await wav(take, TAKE_MIB * MiB, 1);
  const clipBytes = Math.floor(((SESSION_MIB - TAKE_MIB) * MiB) / (SESSION_FILES - 1));
  for (let i = 1; i < SESSION_FILES; i += 1) await wav(path.join(session, `Audio/Clips ${i % 10}/clip-${i}.wav`), clipBytes, i + 1);
  const sessionCut = await newCut();
  const first = await timed(() => bandRun(['push', session, '--cut', sessionCut, '--jobs', '8', '--quiet']));
  const clips = path.join(work, 'clips');
  for (let i = 0; i < CLIPS; i += 1) await wav(path.join(clips, `clip-${i}.wav`), MiB, 10_000 + i);

  const rounds = { version: [], again: [], serverBytes: [], pushBytes: [], changed: [], plain: [], firstPush: [], bulk: [] };
  let summary;
  for (let round = 0; round < ROUNDS; round += 1) {
    // a) Nothing changed, against band's own start.
    rounds.version.push((await timed(() => bandRun(['--version']))).seconds);
    const probe = path.join(work, `push-io-${round}`);
    const serverBefore = await serverRead();
    const again = await timed(() => bandRun(['push', session, '--cut', sessionCut], { extraEnv: { NODE_OPTIONS: `--import ${ioProbe}`, BAND_IO_PROBE: probe } }));
    rounds.serverBytes.push((await serverRead()) - serverBefore);
    rounds.pushBytes.push(Number(/rchar: (\d+)/.exec(await readFile(probe, 'utf8'))[1]));
    rounds.again.push(again.seconds);
    summary = again.result.stderr.trim().split('\n').at(-1);

    // b) The take changed (a header byte: same size, as a bounce of the same length), against a plain upload of it.
    const handle = await open(take, 'r+');
    await handle.write(Buffer.from([round + 2]), 0, 1, 4);
    await handle.close();
    rounds.changed.push((await timed(() => bandRun(['push', session, '--cut', sessionCut, '--quiet']))).seconds);
    const plainCut = await newCut();
    rounds.plain.push((await timed(() => bandRun(['file', 'upload', take, '--cut', plainCut, '--no-progress', '--quiet']))).seconds);

    // c) A first push of many small files (to a new cut, without the last round's manifest) against a bulk upload.
    const bulkCut = await newCut();
    rounds.bulk.push((await timed(() => bandRun(['file', 'upload', 'clips/*.wav', '--cut', bulkCut, '--jobs', '8', '--no-progress', '--quiet']))).seconds);
    await rm(path.join(clips, '.band'), { recursive: true, force: true });
    const clipsCut = await newCut();
    rounds.firstPush.push((await timed(() => bandRun(['push', clips, '--cut', clipsCut, '--jobs', '8', '--quiet']))).seconds);
  }
  const m = Object.fromEntries(Object.entries(rounds).map(([name, values]) => [name, median(values)]));
  report('session push, nothing changed', {
    rounds: ROUNDS,
    files: SESSION_FILES,
    sessionMiB: SESSION_MIB,
    firstPushSeconds: round(first.seconds),
    seconds: round(m.again),
    ratioOverBandVersion: round(m.again / m.version),
    serverBytesRead: m.serverBytes,
    pushBytesRead: m.pushBytes,
    pushBytesReadOverSession: round(m.pushBytes / (SESSION_MIB * MiB)),
    summary,
  });
  report('session push, one take changed', {
    rounds: ROUNDS,
    takeMiB: TAKE_MIB,
    pushSeconds: round(m.changed),
    fileUploadSeconds: round(m.plain),
    ratioPushOverFileUpload: round(m.changed / m.plain),
  });
  report('session first push of small files', {
    rounds: ROUNDS,
    files: CLIPS,
    fileMiB: 1,
    pushSeconds: round(m.firstPush),
    fileUploadJobs8Seconds: round(m.bulk),
    ratioPushOverFileUpload: round(m.firstPush / m.bulk),
  });

  // d) A 2 GiB WAV streamed through the server, its RSS sampled.
  const large = path.join(work, 'large.wav');
  await wav(large, LARGE_MIB * MiB - 1, 99); // the audio limit is 2 GiB
  const largeCut = await newCut();
  const rssBefore = await memory(server.process.pid, 'VmRSS');
  const samples = [];
  const sampler = setInterval(() => memory(server.process.pid, 'VmRSS').then((rss) => samples.push(rss), () => undefined), 100);
  const upload = await timed(() => bandRun(['file', 'upload', large, '--cut', largeCut, '--no-progress', '--quiet']));
  clearInterval(sampler);
  const quarter = Math.floor(samples.length / 4);
  const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
  report('large WAV through the server', {
    sizeMiB: LARGE_MIB,
    seconds: round(upload.seconds),
    MBps: round((LARGE_MIB * MiB) / upload.seconds / 1e6),
    samples: samples.length,
    rssBeforeMiB: round(rssBefore / MiB),
    rssPeakMiB: round(Math.max(...samples) / MiB),
    rssFirstQuarterMeanMiB: round(mean(samples.slice(0, quarter)) / MiB),
    rssLastQuarterMeanMiB: round(mean(samples.slice(-quarter)) / MiB),
  });
} finally {
  server.process.kill('SIGTERM');
  await once(server.process, 'exit');
  await rm(work, { recursive: true, force: true });
}
