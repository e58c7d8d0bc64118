// API benchmark of the built server (run `pnpm build` first; the root `pnpm bench` does): one user with 20
// projects, `GET /api/projects` with a bearer token over 50 concurrent keep-alive connections for 10 s,
// side by side in one run with a bare @tinyhttp/app "hello" (api-bare-hello-server.mjs) driven by the same
// client. The client is a small node:http load generator: each connection sends its next request as soon as
// the previous answer ended. Prints throughput, their ratio, p50/p99 latency and errors (any non-200 or
// failed request). Wall-clock rates swing with whatever else the machine runs: the CPU time each side spends
// per request is printed beside them (bandcollab's own process, and its PostgreSQL processes separately).
// A third server shows the floor of the endpoint (api-bare-query-server.mjs): bare tinyhttp running the same
// query through postgres.js against the same database and sending the same JSON, nothing else.
// Then the same requests with a personal access token (bcp_…) instead of the session's access token: a
// token costs one indexed lookup per request where a session is usually answered from memory, so their
// throughput, latency and CPU (ours and PostgreSQL's) per request are printed side by side.
// BENCH_API_SECONDS and BENCH_API_CONNECTIONS change the run.
import { once } from 'node:events';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 50);
const PROJECTS = 20;
const TARGETS = { ratio: 0.5, p99Ms: 20 };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-api-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const servers = [];
try {
  const bandcollab = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  servers.push(bandcollab);
  const hello = await start(path.join(here, 'api-bare-hello-server.mjs'));
  servers.push(hello);

  const auth = await call(bandcollab.url, 'POST', '/api/auth/register', null, { email: `bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
  for (let i = 0; i < PROJECTS; i += 1) await call(bandcollab.url, 'POST', '/api/projects', auth.accessToken, { name: `Bench ${i + 1}` });
  const listed = await call(bandcollab.url, 'GET', '/api/projects', auth.accessToken);
  if (listed.length !== PROJECTS) throw new Error(`expected ${PROJECTS} projects, got ${listed.length}`);
  const me = await call(bandcollab.url, 'GET', '/api/auth/me', auth.accessToken);
  const query = await start(path.join(here, 'api-bare-query-server.mjs'), [await databaseUrl(path.join(work, 'data')), me.id]);
  servers.push(query);
  if ((await call(query.url, 'GET', '/', null)).length !== PROJECTS) throw new Error('the bare query server lists other projects');

  // A short warm-up of each, so neither pays for its JIT inside the measured seconds.
  await load(`${bandcollab.url}/api/projects`, { authorization: `Bearer ${auth.accessToken}` }, 1, CONNECTIONS);
  await load(hello.url, {}, 1, CONNECTIONS);
  await load(query.url, {}, 1, CONNECTIONS);
  const ours = await measured([bandcollab.process.pid], () => load(`${bandcollab.url}/api/projects`, { authorization: `Bearer ${auth.accessToken}` }, SECONDS, CONNECTIONS));
  const bare = await measured([hello.process.pid], () => load(hello.url, {}, SECONDS, CONNECTIONS));
  const floor = await measured([query.process.pid], () => load(query.url, {}, SECONDS, CONNECTIONS), bandcollab.process.pid);

  const { token } = await call(bandcollab.url, 'POST', '/api/tokens', auth.accessToken, { name: 'bench', scope: 'read', expiresIn: 3600 });
  await load(`${bandcollab.url}/api/projects`, { authorization: `Bearer ${token}` }, 1, CONNECTIONS);
  const byToken = await measured([bandcollab.process.pid], () => load(`${bandcollab.url}/api/projects`, { authorization: `Bearer ${token}` }, SECONDS, CONNECTIONS));

  const ratio = ours.requestsPerSecond / bare.requestsPerSecond;
  report('api GET /api/projects', {
    projects: PROJECTS,
    connections: CONNECTIONS,
    seconds: SECONDS,
    bandcollabRps: Math.round(ours.requestsPerSecond),
    bareHelloRps: Math.round(bare.requestsPerSecond),
    ratio: round(ratio),
    bandcollabP50Ms: round(ours.p50),
    bandcollabP99Ms: round(ours.p99),
    bareHelloP50Ms: round(bare.p50),
    bareHelloP99Ms: round(bare.p99),
    bandcollabCpuMsPerRequest: round3(ours.cpu[0] / ours.requests),
    bandcollabPostgresCpuMsPerRequest: round3(ours.descendantsCpu / ours.requests),
    bareHelloCpuMsPerRequest: round3(bare.cpu[0] / bare.requests),
    bareQueryRps: Math.round(floor.requestsPerSecond),
    ratioOverBareQuery: round(ours.requestsPerSecond / floor.requestsPerSecond),
    bareQueryP99Ms: round(floor.p99),
    bareQueryCpuMsPerRequest: round3(floor.cpu[0] / floor.requests),
    bareQueryPostgresCpuMsPerRequest: round3(floor.descendantsCpu / floor.requests),
    bandcollabErrors: ours.errors,
    bareHelloErrors: bare.errors,
    target: `ratio >= ${TARGETS.ratio}, p99 < ${TARGETS.p99Ms} ms, no errors`,
    met: ratio >= TARGETS.ratio && ours.p99 < TARGETS.p99Ms && ours.errors === 0,
  });
  const perRequest = (run) => (run.cpu[0] + run.descendantsCpu) / run.requests;
  report('api GET /api/projects: personal access token vs session', {
    connections: CONNECTIONS,
    seconds: SECONDS,
    sessionRps: Math.round(ours.requestsPerSecond),
    tokenRps: Math.round(byToken.requestsPerSecond),
    tokenToSessionRatio: round(byToken.requestsPerSecond / ours.requestsPerSecond),
    sessionP50Ms: round(ours.p50),
    sessionP99Ms: round(ours.p99),
    tokenP50Ms: round(byToken.p50),
    tokenP99Ms: round(byToken.p99),
    sessionCpuMsPerRequest: round3(perRequest(ours)),
    tokenCpuMsPerRequest: round3(perRequest(byToken)),
    tokenPostgresCpuMsPerRequest: round3(byToken.descendantsCpu / byToken.requests),
    tokenErrors: byToken.errors,
    target: 'token CPU per request (ours + PostgreSQL) at most the session\'s, no errors',
    met: perRequest(byToken) <= perRequest(ours) && byToken.errors === 0,
  });
} finally {
  for (const server of servers) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}

/**
 * Runs `work` and adds the CPU milliseconds the processes `pids` and, apart, all descendants of
 * `postgresParent` (the process that started the embedded PostgreSQL) spent meanwhile.
 */
async function measured(pids, work, postgresParent = pids[0]) {
  const before = await Promise.all(pids.map(cpuMs));
  const descendantsBefore = await descendantsCpuMs(postgresParent);
  const result = await work();
  const after = await Promise.all(pids.map(cpuMs));
  const descendantsCpu = (await descendantsCpuMs(postgresParent)) - descendantsBefore;
  return { ...result, cpu: after.map((ms, i) => ms - before[i]), descendantsCpu };
}

/** User + system CPU time of a process (fields 14 and 15 of /proc/PID/stat, in clock ticks of 10 ms), and its parent. */
async function stat(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return { ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

async function cpuMs(pid) {
  return (await stat(pid)).cpuMs;
}

/** The CPU time of every live descendant of `root` (the embedded PostgreSQL's processes). */
async function descendantsCpuMs(root) {
  const all = new Map();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = await stat(entry).catch(() => null);
    if (info) all.set(Number(entry), info);
  }
  const inTree = (pid) => {
    for (let current = all.get(pid)?.ppid; current; current = all.get(current)?.ppid) if (current === root) return true;
    return false;
  };
  let total = 0;
  for (const [pid, info] of all) if (inTree(pid)) total += info.cpuMs;
  return total;
}

/** The embedded PostgreSQL of a DATA_DIR: the port its owner file records, the password the server keeps there. */
async function databaseUrl(dataDir) {
  const { port } = JSON.parse(await readFile(path.join(dataDir, 'postgres-owner.json'), 'utf8'));
  const password = (await readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/bandcollab`;
}

function round3(value) {
  return Math.round(value * 1000) / 1000;
}
