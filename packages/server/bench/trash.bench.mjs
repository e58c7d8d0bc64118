// The trash (§21) on the built server (`pnpm build` first). (1) Restoring a cut holding 1 GiB in 100 files
// (BENCH_TRASH_CUT_FILES × 10 MiB): a restore clears stamps and touches no byte, so its time does not grow with
// the bytes (target ≤ 1 s; median of 5 delete/restore rounds). (2) GET /api/projects/:id of a project whose
// trash holds 10,000 files (BENCH_TRASH_FILES) against an alike project with an empty trash, in the same run:
// the `live` views keep trashed rows out of the detail's queries (target ≥ 0.95× the throughput).
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, median, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CUT_FILES = Number(process.env.BENCH_TRASH_CUT_FILES ?? 100);
const FILE_MIB = Number(process.env.BENCH_TRASH_FILE_MIB ?? 10);
const TRASHED_FILES = Number(process.env.BENCH_TRASH_FILES ?? 10_000);
const SECONDS = Number(process.env.BENCH_TRASH_SECONDS ?? 5);

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-trash-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
let server;
try {
  server = await start(path.resolve(here, '../dist/main.js'), [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  const url = server.url;
  const auth = await call(url, 'POST', '/api/auth/register', null, { email: `bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
  const token = auth.accessToken;
  const projectWith = async (name) => {
    const project = await call(url, 'POST', '/api/projects', token, { name });
    const vibe = await call(url, 'POST', `/api/projects/${project.id}/vibes`, token, { name: 'Verse' });
    const cut = await call(url, 'POST', `/api/vibes/${vibe.id}/cuts`, token, { name: 'Take' });
    return { projectId: project.id, vibeId: vibe.id, cutId: cut.id };
  };
  /** A session file (no analysis) of `bytes` at a path of its own; each one's bytes differ. */
  const upload = async (cutId, index, bytes) => {
    bytes.writeUInt32BE(index, 0);
    const form = new FormData();
    form.append('cutId', cutId);
    form.append('path', `stems/part-${index}.bin`);
    form.append('file', new Blob([bytes]), `part-${index}.bin`);
    const response = await fetch(`${url}/api/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    if (response.status !== 201) throw new Error(`upload: ${response.status} ${await response.text()}`);
  };

  // (1) Restore of a cut of CUT_FILES × FILE_MIB.
  const big = await projectWith('Big cut');
  const chunk = Buffer.alloc(FILE_MIB * 1024 * 1024, 7);
  for (let i = 0; i < CUT_FILES; i += 1) await upload(big.cutId, i, chunk);
  const restores = [];
  for (let attempt = 0; attempt < 5; attempt += 1) {
    await call(url, 'DELETE', `/api/cuts/${big.cutId}`, token);
    const started = performance.now();
    await call(url, 'POST', `/api/trash/cut/${big.cutId}/restore`, token);
    restores.push(performance.now() - started);
  }
  report('trash restore of a cut', { files: CUT_FILES, bytes: CUT_FILES * chunk.length, medianMs: round(median(restores)), maxMs: round(Math.max(...restores)), targetMs: 1000 });

  // (2) The project detail with TRASHED_FILES in the trash, against one with none.
  const full = await projectWith('Full trash');
  const empty = await projectWith('Empty trash');
  const trashedCut = await call(url, 'POST', `/api/vibes/${full.vibeId}/cuts`, token, { name: 'Trashed' });
  const small = Buffer.alloc(64, 1);
  for (let i = 0; i < TRASHED_FILES; i += 1) await upload(trashedCut.id, i, small);
  await call(url, 'DELETE', `/api/cuts/${trashedCut.id}`, token);
  const headers = { authorization: `Bearer ${token}` };
  // Alternated, so a drift of the machine weighs on both.
  const runs = { none: [], trashed: [] };
  for (let i = 0; i < 2; i += 1) {
    runs.none.push(await load(`${url}/api/projects/${empty.projectId}`, headers, SECONDS, 4));
    runs.trashed.push(await load(`${url}/api/projects/${full.projectId}`, headers, SECONDS, 4));
  }
  const rate = (list) => list.reduce((sum, run) => sum + run.requestsPerSecond, 0) / list.length;
  report('project detail with a full trash', {
    trashedFiles: TRASHED_FILES,
    noneRequestsPerSecond: round(rate(runs.none)),
    trashedRequestsPerSecond: round(rate(runs.trashed)),
    ratio: round(rate(runs.trashed) / rate(runs.none)),
    target: 0.95,
    errors: [...runs.none, ...runs.trashed].reduce((sum, run) => sum + run.errors, 0),
  });
} finally {
  server?.process.kill('SIGTERM');
  if (server) await new Promise((resolve) => server.process.once('exit', resolve));
  await rm(work, { recursive: true, force: true });
}
