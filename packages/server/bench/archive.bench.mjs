// Cut archive benchmark of the built server and CLI (run `pnpm build` first; the root `pnpm bench` does):
//  1. the ZIP of a cut holding 8 files of 60 MiB (GET /api/cuts/:id/archive) against a plain download of
//     one 480 MiB file (GET /api/files/:id/download) from the same server in the same run: throughput ratio
//     (target at least 0.9) and the server's peak RSS growth during the archive (target under 32 MiB);
//  2. `band file download --cut` of 200 files of 1 MiB with --jobs 8 against --jobs 1 (the speed-up).
// Rounds alternate which runs first; medians are reported. The stored files are sparse (reading them costs
// no disk), so the server's own work is what is measured: reading, CRC-32 and the socket.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { chmod, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { call, measure, median, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const band = path.resolve(here, '../../cli/dist/band.cjs');
const run = promisify(execFile);
const MiB = 1024 * 1024;
const FILES = Number(process.env.BENCH_ARCHIVE_FILES ?? 8);
const FILE_MIB = Number(process.env.BENCH_ARCHIVE_FILE_MIB ?? 60);
const SMALL_FILES = Number(process.env.BENCH_FILES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TARGETS = { throughputRatio: 0.9, growthMiB: 32 };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-archive-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
try {
  const { token, vibeId } = await seed(server.url);
  const stems = await call(server.url, 'POST', `/api/vibes/${vibeId}/cuts`, token, { name: 'Stems' });
  const plainCut = await call(server.url, 'POST', `/api/vibes/${vibeId}/cuts`, token, { name: 'Plain' });
  const stem = await sparse('stem.wav', 'RIFF\x24\x00\x00\x00WAVEfmt ', FILE_MIB * MiB);
  for (let i = 0; i < FILES; i += 1) await upload(server.url, token, stems.id, stem, `stem-${i}.wav`);
  const whole = await sparse('whole.zip', 'PK\x03\x04', FILES * FILE_MIB * MiB);
  const plain = await upload(server.url, token, plainCut.id, whole, 'whole.zip');

  const auth = { authorization: `Bearer ${token}` };
  const rounds = { archive: [], plain: [] };
  for (let i = 0; i < ROUNDS; i += 1) {
    const runs = [
      ['archive', () => measure(server, () => fetchAll(`${server.url}/api/cuts/${stems.id}/archive`, auth))],
      ['plain', () => measure(server, () => fetchAll(`${server.url}/api/files/${plain.id}/download`, auth))],
    ];
    if (i % 2 === 1) runs.reverse();
    for (const [name, measured] of runs) rounds[name].push(await measured());
  }
  const archiveSize = rounds.archive[0].result.size;
  const rate = (runs, size) => median(runs.map((r) => size / r.seconds / 1e6));
  const cpuRate = (runs, size) => median(runs.map((r) => size / r.cpu / 1e6));
  const ratio = rate(rounds.archive, archiveSize) / rate(rounds.plain, whole.size);
  const growth = Math.max(...rounds.archive.map((r) => r.growthMiB));
  report('cut archive', {
    files: FILES,
    fileMiB: FILE_MIB,
    rounds: ROUNDS,
    archiveMBps: round(rate(rounds.archive, archiveSize)),
    plainDownloadMBps: round(rate(rounds.plain, whole.size)),
    ratio: round(ratio),
    archiveMBperCpuSecond: round(cpuRate(rounds.archive, archiveSize)),
    plainMBperCpuSecond: round(cpuRate(rounds.plain, whole.size)),
    archiveRssGrowthMiB: growth,
    plainRssGrowthMiB: Math.max(...rounds.plain.map((r) => r.growthMiB)),
    target: `ratio >= ${TARGETS.throughputRatio}, growth < ${TARGETS.growthMiB} MiB`,
    met: ratio >= TARGETS.throughputRatio && growth < TARGETS.growthMiB,
  });

  const session = await call(server.url, 'POST', `/api/vibes/${vibeId}/cuts`, token, { name: 'Session' });
  const small = await sparse('small.wav', 'RIFF\x24\x00\x00\x00WAVEfmt ', MiB);
  for (let i = 0; i < SMALL_FILES; i += 1) await upload(server.url, token, session.id, small, `take-${i}.wav`);
  const env = { PATH: process.env.PATH, HOME: path.join(work, 'home'), BAND_API_URL: server.url, BAND_TOKEN: token };
  const pull = async (jobs, round) => {
    const dir = path.join(work, `pull-${jobs}-${round}`);
    const started = performance.now();
    await run(process.execPath, [band, 'file', 'download', '--cut', session.id, '--dir', dir, '--jobs', String(jobs), '--no-progress'], { env });
    const seconds = (performance.now() - started) / 1000;
    await rm(dir, { recursive: true, force: true });
    return seconds;
  };
  const pulls = { 8: [], 1: [] };
  for (let i = 0; i < Math.min(ROUNDS, 3); i += 1) {
    const order = i % 2 === 0 ? [8, 1] : [1, 8];
    for (const jobs of order) pulls[jobs].push(await pull(jobs, i));
  }
  report('band file download --cut', {
    files: SMALL_FILES,
    fileMiB: 1,
    jobs8Seconds: round(median(pulls[8])),
    jobs1Seconds: round(median(pulls[1])),
    speedUp: round(median(pulls[1]) / median(pulls[8])),
  });
} finally {
  server.process.kill('SIGTERM');
  await once(server.process, 'exit');
  await rm(work, { recursive: true, force: true });
}

/** A sparse file of `size` bytes that starts with `leading` (latin1), so the server takes its type. */
async function sparse(name, leading, size) {
  const file = path.join(work, name);
  await writeFile(file, Buffer.from(leading, 'latin1'));
  await truncate(file, size);
  return { path: file, size };
}

/** Streams a multipart upload of `file` under `fileName`; resolves with the File record. */
function upload(baseUrl, token, cutId, file, fileName) {
  const boundary = '----bandcollab-archive-bench';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="cutId"\r\n\r\n${cutId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/api/files/upload`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + file.size + tail.length },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`upload: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.write(head);
    const stream = createReadStream(file.path, { highWaterMark: MiB });
    stream.pipe(req, { end: false });
    stream.on('end', () => req.end(tail));
  });
}

/** GETs a URL and counts the bytes without keeping them; checks they are as many as Content-Length said. */
function fetchAll(url, headers) {
  return new Promise((resolve, reject) => {
    request(url, { agent: false, headers }, (res) => {
      let size = 0;
      res.on('data', (chunk) => (size += chunk.length));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
        if (size !== Number(res.headers['content-length'])) return reject(new Error(`GET ${url}: ${size} bytes, Content-Length ${res.headers['content-length']}`));
        resolve({ size });
      });
    })
      .on('error', reject)
      .end();
  });
}

async function seed(baseUrl) {
  const auth = await call(baseUrl, 'POST', '/api/auth/register', null, { email: `archive-bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
  const project = await call(baseUrl, 'POST', '/api/projects', auth.accessToken, { name: 'Bench' });
  const vibe = await call(baseUrl, 'POST', `/api/projects/${project.id}/vibes`, auth.accessToken, { name: 'Bench' });
  return { token: auth.accessToken, vibeId: vibe.id };
}
