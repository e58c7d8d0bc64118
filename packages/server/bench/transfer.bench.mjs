// Transfer benchmark of the built server (run `pnpm build` first; the root `pnpm bench` does), side by side
// in one run with bare node:http servers (transfer-bare-server.mjs) fed the same request bodies over loopback:
//  1. upload of a ZIP (500 MiB) as multipart: bandcollab vs a bare server piping the body to disk, with and
//     without sha256 (bandcollab hashes, so pipe+sha256 is the fair baseline; the raw pipe is shown beside it);
//  2. download of the stored file: bandcollab's download endpoint vs createReadStream().pipe(res);
//  3. 8 concurrent 100 MiB uploads to bandcollab.
// Throughput is the median of alternating rounds, in MB/s (10^6 bytes per second). Server memory is the
// peak RSS growth of the server process during a transfer: VmHWM after, minus VmRSS before, with the
// high-water mark reset (clear_refs) just before the transfer.
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, fetchAll, measure, median, multipart, report, round, seed, send, start, zipFile } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENT = 8;
const CONCURRENT_MIB = Number(process.env.BENCH_CONCURRENT_MIB ?? 100);
const TARGETS = { throughputRatio: 0.8, uploadGrowthMiB: 64 };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-server-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const servers = [];
try {
  const started = async (script, args, env) => {
    const server = await start(script, args, env);
    servers.push(server);
    return server;
  };
  const bandcollab = await started(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  const barePipe = await started(path.join(here, 'transfer-bare-server.mjs'), ['pipe', await dir('pipe')]);
  const bareHash = await started(path.join(here, 'transfer-bare-server.mjs'), ['pipe+sha256', await dir('hash')]);
  const { token, cutId } = await seed(bandcollab.url);

  const big = await zipFile(work, 'stems.zip', UPLOAD_MIB);
  const body = multipart(cutId, 'stems.zip');
  const upload = (server, file) => {
    const target = server === bandcollab ? `${server.url}/api/files/upload` : server.url;
    return measure(server, () => send(target, token, body, file));
  };

  const rounds = { ours: [], pipe: [], hash: [], oursDown: [], bareDown: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    // The order rotates so that no server always runs first (or last) after the others' writes.
    const order = [
      ['ours', bandcollab],
      ['hash', bareHash],
      ['pipe', barePipe],
    ];
    for (const [name, server] of [...order.slice(round % 3), ...order.slice(0, round % 3)]) rounds[name].push(await upload(server, big));
    const ours = rounds.ours.at(-1);
    if (ours.result.status !== 201) throw new Error(`upload failed: ${ours.result.status} ${ours.result.body}`);
    const record = JSON.parse(ours.result.body);

    const stored = path.join(work, 'data', 'files', `${record.id}.zip`);
    const downloads = [
      ['oursDown', () => measure(bandcollab, () => fetchAll(`${bandcollab.url}/api/files/${record.id}/download`, { authorization: `Bearer ${token}` }))],
      ['bareDown', () => measure(barePipe, () => fetchAll(barePipe.url, { 'x-file': stored }))],
    ];
    if (round % 2 === 1) downloads.reverse();
    for (const [name, download] of downloads) rounds[name].push(await download());
    await call(bandcollab.url, 'DELETE', `/api/files/${record.id}`, token);
  }

  // Wall-clock rates swing with whatever else the machine runs; the servers' own CPU time per byte is
  // reported beside them (as MB per CPU-second), and is the steadier comparison on a shared machine.
  const rate = (runs, size) => median(runs.map((run) => size / run.seconds / 1e6));
  const cpuRate = (runs, size) => median(runs.map((run) => size / run.cpu / 1e6));
  const growth = (runs) => Math.max(...runs.map((run) => run.growthMiB));
  const uploadSize = big.size + body.overhead;
  const uploadRatio = rate(rounds.ours, uploadSize) / rate(rounds.hash, uploadSize);
  const downloadRatio = rate(rounds.oursDown, big.size) / rate(rounds.bareDown, big.size);
  report('upload', {
    sizeMiB: UPLOAD_MIB,
    rounds: ROUNDS,
    bandcollabMBps: round(rate(rounds.ours, uploadSize)),
    barePipeSha256MBps: round(rate(rounds.hash, uploadSize)),
    barePipeMBps: round(rate(rounds.pipe, uploadSize)),
    ratioOverPipeSha256: round(uploadRatio),
    ratioOverPipe: round(rate(rounds.ours, uploadSize) / rate(rounds.pipe, uploadSize)),
    bandcollabMBperCpuSecond: round(cpuRate(rounds.ours, uploadSize)),
    barePipeSha256MBperCpuSecond: round(cpuRate(rounds.hash, uploadSize)),
    cpuRatioOverPipeSha256: round(cpuRate(rounds.ours, uploadSize) / cpuRate(rounds.hash, uploadSize)),
    bandcollabRssGrowthMiB: growth(rounds.ours),
    barePipeSha256RssGrowthMiB: growth(rounds.hash),
    target: `ratio >= ${TARGETS.throughputRatio}, growth < ${TARGETS.uploadGrowthMiB} MiB`,
    met: uploadRatio >= TARGETS.throughputRatio && growth(rounds.ours) < TARGETS.uploadGrowthMiB,
  });
  report('download', {
    sizeMiB: UPLOAD_MIB,
    rounds: ROUNDS,
    bandcollabMBps: round(rate(rounds.oursDown, big.size)),
    bareMBps: round(rate(rounds.bareDown, big.size)),
    ratio: round(downloadRatio),
    bandcollabMBperCpuSecond: round(cpuRate(rounds.oursDown, big.size)),
    bareMBperCpuSecond: round(cpuRate(rounds.bareDown, big.size)),
    cpuRatio: round(cpuRate(rounds.oursDown, big.size) / cpuRate(rounds.bareDown, big.size)),
    bandcollabRssGrowthMiB: growth(rounds.oursDown),
    bareRssGrowthMiB: growth(rounds.bareDown),
    target: `ratio >= ${TARGETS.throughputRatio}`,
    met: downloadRatio >= TARGETS.throughputRatio,
  });

  const medium = await zipFile(work, 'medium.zip', CONCURRENT_MIB);
  const mediumBody = multipart(cutId, 'medium.zip');
  const concurrent = await measure(bandcollab, () =>
    Promise.all(Array.from({ length: CONCURRENT }, () => send(`${bandcollab.url}/api/files/upload`, token, mediumBody, medium))),
  );
  if (concurrent.result.some((result) => result.status !== 201)) throw new Error('a concurrent upload failed');
  report('concurrent uploads', {
    uploads: CONCURRENT,
    sizeMiB: CONCURRENT_MIB,
    totalMBps: round((CONCURRENT * medium.size) / concurrent.seconds / 1e6),
    bandcollabRssGrowthMiB: concurrent.growthMiB,
    target: `growth < ${TARGETS.uploadGrowthMiB} MiB`,
    met: concurrent.growthMiB < TARGETS.uploadGrowthMiB,
  });
} finally {
  for (const server of servers) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}

async function dir(name) {
  const target = path.join(work, name);
  await mkdir(target);
  return target;
}

