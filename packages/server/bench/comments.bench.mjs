// Comment pages of the built server (run `pnpm build` first; the root `pnpm bench` does): one file with 10,000
// top-level comments. Prints the p50/p99 of one page of 200 (every page of the list, several rounds) beside the
// p50/p99 of `GET /api/files/:id` on the same server in the same run (the baseline: one indexed read), and the
// time to read all 10,000 through the SDK's async iterator beside the same pages fetched with bare `fetch`.
// BENCH_COMMENTS changes the count.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const { BandClient } = await import(path.resolve(here, '../../sdk/dist/index.js'));
const COMMENTS = Number(process.env.BENCH_COMMENTS ?? 10_000);
const PAGE = 200;
const ROUNDS = 4;
const SEEDERS = 8;

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-comments-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
let server;
try {
  server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  const auth = await call(server.url, 'POST', '/api/auth/register', null, { email: `bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
  const token = auth.accessToken;
  const project = await call(server.url, 'POST', '/api/projects', token, { name: 'Bench' });
  const vibe = await call(server.url, 'POST', `/api/projects/${project.id}/vibes`, token, { name: 'Song' });
  const cut = await call(server.url, 'POST', `/api/vibes/${vibe.id}/cuts`, token, { name: 'Mix' });
  const form = new FormData();
  form.append('cutId', cut.id);
  form.append('file', new Blob([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00mix')]), 'mix.mp3');
  const uploaded = await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const file = await uploaded.json();

  let next = 0;
  await Promise.all(
    Array.from({ length: SEEDERS }, async () => {
      while (next < COMMENTS) {
        const n = next++;
        await call(server.url, 'POST', `/api/files/${file.id}/comments`, token, { body: `note ${n}`, atMs: (n * 7919) % 240_000 });
      }
    }),
  );

  const timed = async (url) => {
    const started = process.hrtime.bigint();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = await response.json();
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return { ms: Number(process.hrtime.bigint() - started) / 1e6, body };
  };
  const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

  const pageTimes = [];
  const recordTimes = [];
  let bareMs = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = process.hrtime.bigint();
    let cursor = null;
    let seen = 0;
    do {
      const page = await timed(`${server.url}/api/files/${file.id}/comments?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`);
      pageTimes.push(page.ms);
      seen += page.body.comments.length;
      cursor = page.body.nextCursor;
      recordTimes.push((await timed(`${server.url}/api/files/${file.id}`)).ms);
    } while (cursor !== null);
    if (seen !== COMMENTS) throw new Error(`paged ${seen} comments, expected ${COMMENTS}`);
    if (round === ROUNDS - 1) bareMs = Number(process.hrtime.bigint() - started) / 1e6 - recordTimes.slice(-COMMENTS / PAGE).reduce((a, b) => a + b, 0);
  }

  const client = new BandClient({ baseUrl: server.url, token });
  const iterated = process.hrtime.bigint();
  let count = 0;
  for await (const _comment of client.comments.list(file.id, { limit: PAGE })) count += 1;
  const sdkMs = Number(process.hrtime.bigint() - iterated) / 1e6;
  if (count !== COMMENTS) throw new Error(`the SDK iterated ${count} comments, expected ${COMMENTS}`);

  report(`comments: one page of ${PAGE} from a file with ${COMMENTS}`, {
    pages: pageTimes.length,
    p50Ms: round(percentile(pageTimes, 50)),
    p99Ms: round(percentile(pageTimes, 99)),
    baselineFileRecordP50Ms: round(percentile(recordTimes, 50)),
    baselineFileRecordP99Ms: round(percentile(recordTimes, 99)),
    p99RatioToFileRecord: round(percentile(pageTimes, 99) / percentile(recordTimes, 99)),
  });
  report(`comments: all ${COMMENTS} through the SDK iterator`, { sdkMs: round(sdkMs), bareFetchMs: round(bareMs), ratioToBareFetch: round(sdkMs / bareMs) });
} finally {
  server?.process.kill('SIGTERM');
  if (server) await new Promise((resolve) => server.process.once('exit', resolve));
  await rm(work, { recursive: true, force: true });
}
