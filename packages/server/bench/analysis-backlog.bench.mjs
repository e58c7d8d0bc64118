// What a backlog of analyses costs the server's answers (the built server; `pnpm build` first): 200 short
// files (10 s each, MP3, FLAC and WAV in turn) are uploaded, then `GET /api/health` is timed one request
// after another while the queue analyses them, and as many times again once the queue is idle. The p99 of
// the busy latencies is the event-loop delay a request meets (target < 20 ms); the idle p99 of the same run
// is its floor on this machine. Also: files analysed per second of the backlog. Needs ffmpeg (Debian package).
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, report, round, seed, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FILES = Number(process.env.BENCH_BACKLOG_FILES ?? 200);
const TARGET_P99_MS = 20;

if (spawnSync('ffmpeg', ['-version']).status !== 0) {
  console.error('analysis backlog bench SKIPPED: ffmpeg is not installed (apt-get install ffmpeg)');
  process.exit(0);
}

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-analysis-backlog-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
let server;
try {
  const fixtures = [
    ['mp3', ['-c:a', 'libmp3lame', '-b:a', '320k'], 'audio/mpeg'],
    ['flac', ['-c:a', 'flac'], 'audio/flac'],
    ['wav', ['-c:a', 'pcm_s16le'], 'audio/wav'],
  ].map(([extension, options, type]) => {
    const file = path.join(work, `take.${extension}`);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.2:sample_rate=48000', '-t', '10', '-ac', '2', ...options, file]);
    return { extension, bytes: readFileSync(file), type };
  });
  server = await start(path.resolve(here, '../dist/main.js'), [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  const { token, cutId } = await seed(server.url);
  const started = performance.now();
  for (let i = 0; i < FILES; i += 1) {
    const { extension, bytes, type } = fixtures[i % fixtures.length];
    const form = new FormData();
    form.append('cutId', cutId);
    form.append('file', new Blob([bytes], { type }), `take-${i}.${extension}`);
    const response = await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    if (response.status !== 201) throw new Error(`upload: ${response.status} ${await response.text()}`);
  }
  const busy = [];
  let pending = FILES;
  while (pending > 0) {
    for (let i = 0; i < 20; i += 1) busy.push(await health(server.url));
    pending = (await call(server.url, 'GET', `/api/cuts/${cutId}`, token)).files.filter((file) => file.analysis === 'pending').length;
  }
  const backlogSeconds = (performance.now() - started) / 1000;
  const idle = [];
  while (idle.length < busy.length) idle.push(await health(server.url));
  report('analysis backlog', {
    files: FILES,
    requests: busy.length,
    busyP50Ms: round(percentile(busy, 0.5)),
    busyP99Ms: round(percentile(busy, 0.99)),
    idleP99Ms: round(percentile(idle, 0.99)),
    p99BusyOverIdle: round(percentile(busy, 0.99) / percentile(idle, 0.99)),
    filesPerSecond: round(FILES / backlogSeconds),
    targetBusyP99Ms: TARGET_P99_MS,
    met: percentile(busy, 0.99) < TARGET_P99_MS,
  });
} finally {
  if (server) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}

async function health(baseUrl) {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/api/health`);
  await response.arrayBuffer();
  return performance.now() - started;
}

function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}
