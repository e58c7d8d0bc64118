// What the analysis queue costs the server's other work (the built server; `pnpm build` first): a 500 MiB
// upload timed while the server's worker analyses 4-minute 48 kHz 24-bit stereo WAVs queued just before it,
// against the same upload with an idle queue, in alternating rounds of one run. Target: < 25 % slower.
// `analysisCoveredUpload` says whether the last queued WAV was still pending when the upload ended, i.e. the
// worker was busy for the whole upload. Needs ffmpeg (Debian package) for the WAVs.
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, statSync } from 'node:fs';
import { chmod, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { call, median, report, round, seed, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** WAVs queued before each busy upload: enough analysis to outlast it. */
const QUEUED_WAVS = 3;
const TARGET_SLOWDOWN = 0.25;

if (spawnSync('ffmpeg', ['-version']).status !== 0) {
  console.error('analysis upload bench SKIPPED: ffmpeg is not installed (apt-get install ffmpeg)');
  process.exit(0);
}

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-analysis-upload-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
let server;
try {
  server = await start(path.resolve(here, '../dist/main.js'), [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  const { token, cutId } = await seed(server.url);
  const wav = path.join(work, 'mix.wav');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.2:sample_rate=48000', '-t', '240', '-ac', '2', '-c:a', 'pcm_s24le', wav]);
  const zip = path.join(work, 'stems.zip');
  await writeFile(zip, Buffer.from('PK\x03\x04', 'latin1'));
  await truncate(zip, UPLOAD_MIB * MiB);
  const upload = (file, name, type) => send(`${server.url}/api/files/upload`, token, cutId, file, name, type);

  const idle = [];
  const busy = [];
  let covered = true;
  for (let i = 0; i < ROUNDS; i += 1) {
    await queueDrained(server.url, token, cutId);
    idle.push(await timed(() => upload(zip, 'stems.zip', 'application/zip')));
    await queueDrained(server.url, token, cutId);
    const queued = [];
    for (let n = 0; n < QUEUED_WAVS; n += 1) queued.push(await upload(wav, `mix-${i}-${n}.wav`, 'audio/wav'));
    busy.push(await timed(() => upload(zip, 'stems.zip', 'application/zip')));
    const last = await call(server.url, 'GET', `/api/files/${queued.at(-1).id}`, token);
    covered &&= last.analysis === 'pending';
  }
  const slowdown = median(busy) / median(idle) - 1;
  report('upload during analysis', {
    uploadMiB: UPLOAD_MIB,
    idleSeconds: round(median(idle)),
    duringAnalysisSeconds: round(median(busy)),
    slowdown: round(slowdown),
    analysisCoveredUpload: covered,
    target: `slowdown < ${TARGET_SLOWDOWN}`,
    met: slowdown < TARGET_SLOWDOWN,
  });
} finally {
  if (server) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}

async function queueDrained(baseUrl, token, cutId) {
  while ((await call(baseUrl, 'GET', `/api/cuts/${cutId}`, token)).files.some((file) => file.analysis === 'pending')) await delay(200);
}

async function timed(work) {
  execFileSync('sync');
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

/** Streams a multipart upload of a local file with a Content-Length; resolves with the File record. */
function send(url, token, cutId, file, fileName, contentType) {
  const boundary = '----bandcollab-bench-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="cutId"\r\n\r\n${cutId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: ${contentType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': head.length + statSync(file).size + tail.length,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`upload: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.write(head);
    const stream = createReadStream(file, { highWaterMark: MiB });
    stream.pipe(req, { end: false });
    stream.on('end', () => req.end(tail));
  });
}
