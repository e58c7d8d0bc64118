// Resumable-upload benchmark of the built server (run `pnpm build` first; the root `pnpm bench` does), beside
// the multipart upload in the same run, on the same server and the same file (a 500 MiB ZIP, over loopback):
//  1. tus in one PATCH, and in 32 MiB PATCHes, against multipart: throughput (median of alternating rounds,
//     MB/s) and the server's peak RSS growth;
//  2. time to resume after an interruption: a PATCH's connection is cut after 64 MiB; once the server has saved
//     what arrived (fsync, then the offset: reported beside, as savedAfterCutMs), a client's HEAD + the next
//     PATCH (1 MiB) is what resuming costs.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { call, measure, median, multipart, report, round, seed, send, start, zipFile } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const syncDisk = () => promisify(execFile)('sync');
const serverMain = path.resolve(here, '../dist/main.js');
const MiB = 1024 * 1024;
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHUNK = 32 * MiB;
const TARGETS = { singlePatchRatio: 0.9, chunkedRatio: 0.75, growthMiB: 64, resumeMs: 100 };
const TUS = { 'tus-resumable': '1.0.0' };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-uploads-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
try {
  const { token, cutId } = await seed(server.url);
  const big = await zipFile(work, 'stems.zip', UPLOAD_MIB);
  const body = multipart(cutId, 'stems.zip');

  const uploads = {
    multipart: async () => {
      const result = await send(`${server.url}/api/files/upload`, token, body, big);
      if (result.status !== 201) throw new Error(`multipart upload: ${result.status} ${result.body}`);
      return JSON.parse(result.body).id;
    },
    single: async () => {
      const url = await create(token, cutId, big.size);
      return (await patch(token, url, 0, big, big.size)).fileId;
    },
    chunked: async () => {
      const url = await create(token, cutId, big.size);
      let answer;
      for (let offset = 0; offset < big.size; offset += CHUNK) answer = await patch(token, url, offset, big, Math.min(big.size, offset + CHUNK));
      return answer.fileId;
    },
  };
  const rounds = { multipart: [], single: [], chunked: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    // The order rotates so that no kind always runs first (or last) after the others' writes, and each starts
    // after a `sync`: a resumable upload makes its bytes durable before it answers, and must not also wait
    // for the bytes an earlier multipart upload left to the kernel.
    const order = Object.keys(uploads);
    for (const name of [...order.slice(round % 3), ...order.slice(0, round % 3)]) {
      await syncDisk();
      const run = await measure(server, uploads[name]);
      rounds[name].push(run);
      await call(server.url, 'DELETE', `/api/files/${run.result}`, token);
    }
  }
  const rate = (runs) => median(runs.map((run) => big.size / run.seconds / 1e6));
  const growth = (runs) => Math.max(...runs.map((run) => run.growthMiB));
  const singleRatio = rate(rounds.single) / rate(rounds.multipart);
  const chunkedRatio = rate(rounds.chunked) / rate(rounds.multipart);
  const tusGrowth = Math.max(growth(rounds.single), growth(rounds.chunked));
  report('resumable upload', {
    sizeMiB: UPLOAD_MIB,
    rounds: ROUNDS,
    multipartMBps: round(rate(rounds.multipart)),
    singlePatchMBps: round(rate(rounds.single)),
    chunkedMBps: round(rate(rounds.chunked)),
    chunkMiB: CHUNK / MiB,
    singlePatchRatio: round(singleRatio),
    chunkedRatio: round(chunkedRatio),
    multipartRssGrowthMiB: growth(rounds.multipart),
    tusRssGrowthMiB: tusGrowth,
    target: `single PATCH >= ${TARGETS.singlePatchRatio}x multipart, chunks >= ${TARGETS.chunkedRatio}x, growth < ${TARGETS.growthMiB} MiB`,
    met: singleRatio >= TARGETS.singlePatchRatio && chunkedRatio >= TARGETS.chunkedRatio && tusGrowth < TARGETS.growthMiB,
  });

  const resumes = [];
  for (let round = 0; round < ROUNDS; round += 1) resumes.push(await resumeAfterCut(token, cutId, big));
  const resumeMs = median(resumes.map((run) => run.resumeMs));
  report('resume after an interruption', {
    rounds: ROUNDS,
    medianMs: round(resumeMs),
    maxMs: round(Math.max(...resumes.map((run) => run.resumeMs))),
    savedAfterCutMs: round(median(resumes.map((run) => run.savedMs))),
    target: `< ${TARGETS.resumeMs} ms (HEAD + continue, loopback)`,
    met: resumeMs < TARGETS.resumeMs,
  });
} finally {
  server.process.kill('SIGTERM');
  await once(server.process, 'exit');
  await rm(work, { recursive: true, force: true });
}

async function create(token, cutId, length) {
  const response = await fetch(`${server.url}/api/uploads`, {
    method: 'POST',
    headers: {
      ...TUS,
      authorization: `Bearer ${token}`,
      'upload-length': String(length),
      'upload-metadata': `cutId ${btoa(cutId)},filename ${btoa('stems.zip')}`,
    },
  });
  if (response.status !== 201) throw new Error(`create: ${response.status} ${await response.text()}`);
  return `${server.url}${response.headers.get('location')}`;
}

/** PATCHes bytes [offset, end) of `file`; with `cutAfter`, destroys the request once that many bytes went out. */
function patch(token, url, offset, file, end, cutAfter = null) {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'PATCH',
      agent: false,
      headers: {
        ...TUS,
        authorization: `Bearer ${token}`,
        'content-type': 'application/offset+octet-stream',
        'upload-offset': String(offset),
        'content-length': String(end - offset),
      },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 204
          ? resolve({ offset: Number(res.headers['upload-offset']), fileId: res.headers['band-file-id'] ?? null })
          : reject(new Error(`PATCH: ${res.statusCode}`)),
      );
    });
    const stream = createReadStream(file.path, { start: offset, end: end - 1, highWaterMark: MiB });
    if (cutAfter === null) {
      req.on('error', reject);
      stream.pipe(req);
      return;
    }
    let sent = 0;
    req.on('error', () => undefined);
    stream.on('data', (chunk) => {
      sent += chunk.length;
      if (!req.write(chunk)) {
        stream.pause();
        req.once('drain', () => stream.resume());
      }
      if (sent >= cutAfter) {
        stream.destroy();
        req.destroy();
        resolve({ cutAt: performance.now() });
      }
    });
  });
}

/**
 * Cuts a PATCH after 64 MiB and waits until a HEAD shows the bytes that arrived (savedMs, from the cut); then
 * times what a resuming client does: HEAD, and a 1 MiB PATCH from the offset it answered (resumeMs).
 */
async function resumeAfterCut(token, cutId, file) {
  const url = await create(token, cutId, file.size);
  const headers = { ...TUS, authorization: `Bearer ${token}` };
  const offsetOf = async () => Number((await fetch(url, { method: 'HEAD', headers })).headers.get('upload-offset'));
  const { cutAt } = await patch(token, url, 0, file, file.size, 64 * MiB);
  while ((await offsetOf()) === 0);
  const savedMs = performance.now() - cutAt;
  const resumed = performance.now();
  const offset = await offsetOf();
  await patch(token, url, offset, file, offset + MiB);
  const resumeMs = performance.now() - resumed;
  await fetch(url, { method: 'DELETE', headers });
  return { savedMs, resumeMs };
}
