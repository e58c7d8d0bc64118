// SDK benchmarks against the built server (run `pnpm build` first; the root `pnpm bench` does):
//  1. client peak RSS during a 500 MiB upload, beside a bare form-data + undici upload of the same file;
//  2. the SDK's time for a small authenticated GET over a bare undici request, as a ratio.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { report, round, start } from '../../server/bench/support.mjs';
import { promisify } from 'node:util';
import { BandClient } from '@bandcollab/sdk';
import { Agent, request } from 'undici';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../../server/dist/main.js');
const run = promisify(execFile);
const MiB = 1024 * 1024;
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 500);
const GET_ROUNDS = Number(process.env.BENCH_GET_ROUNDS ?? 9);
const GETS_PER_ROUND = Number(process.env.BENCH_GETS_PER_ROUND ?? 500);

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-sdk-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
try {
  const client = new BandClient({ baseUrl: server.url, timeoutMs: 120_000 });
  await client.auth.register({ email: `bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
  const project = await client.projects.create({ name: 'Bench' });
  const vibe = await client.vibes.create(project.id, { name: 'Bench' });
  const cut = await client.cuts.create(vibe.id, { name: 'Bench' });

  const file = path.join(work, 'stems.zip');
  await writeFile(file, Buffer.from('PK\x03\x04', 'latin1'));
  await truncate(file, UPLOAD_MIB * MiB);
  const uploadArgs = [server.url, client.sessionTokens.accessToken, cut.id, file];
  const bare = await measure(path.join(here, 'bare-upload-peak-rss.mjs'), uploadArgs);
  const sdk = await measure(path.join(here, '../test/fixtures/upload-peak-rss.mjs'), uploadArgs);
  report('upload peak RSS', {
    sizeMiB: UPLOAD_MIB,
    sdkPeakMiB: mib(sdk.peakRss),
    barePeakMiB: mib(bare.peakRss),
    sdkGrowthMiB: mib(sdk.peakRss - sdk.idleRss),
    bareGrowthMiB: mib(bare.peakRss - bare.idleRss),
    peakRatioSdkOverBare: round(sdk.peakRss / bare.peakRss),
    sdkSeconds: round(sdk.seconds),
    bareSeconds: round(bare.seconds),
  });

  report('small GET overhead', await getOverhead(server.url, client.sessionTokens.accessToken));
} finally {
  server.process.kill('SIGTERM');
  await once(server.process, 'exit');
  await rm(work, { recursive: true, force: true });
}

async function measure(script, args) {
  const { stdout } = await run(process.execPath, [script, ...args]);
  return JSON.parse(stdout);
}

/** Alternating rounds of N sequential `GET /api/auth/me`, SDK then bare undici, on the same kind of Agent. */
async function getOverhead(baseUrl, accessToken) {
  const sdkClient = new BandClient({ baseUrl, accessToken, dispatcher: new Agent() });
  const bareAgent = new Agent();
  const bareMe = async () => {
    const response = await request(`${baseUrl}/api/auth/me`, {
      dispatcher: bareAgent,
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    });
    return response.body.json();
  };
  // Wall time is shared with the server and the other processes on the machine; the client's own CPU time
  // is what the SDK adds, so both are reported.
  const time = async (call) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < GETS_PER_ROUND; i += 1) await call();
    const used = process.cpuUsage(cpu);
    return { wall: performance.now() - started, cpu: used.user + used.system };
  };
  await time(bareMe);
  await time(() => sdkClient.auth.me());
  const wallRatios = [];
  const cpuRatios = [];
  for (let i = 0; i < GET_ROUNDS; i += 1) {
    const bare = await time(bareMe);
    const sdk = await time(() => sdkClient.auth.me());
    wallRatios.push(sdk.wall / bare.wall);
    cpuRatios.push(sdk.cpu / bare.cpu);
  }
  return {
    requests: GETS_PER_ROUND * GET_ROUNDS,
    medianWallRatioSdkOverBare: median(wallRatios),
    medianClientCpuRatioSdkOverBare: median(cpuRatios),
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.floor(sorted.length / 2)]);
}

function mib(bytes) {
  return round(bytes / MiB);
}
