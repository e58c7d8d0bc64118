import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { multipartPieces, rawUpload, sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { type ServerEnv, type ServerProcess, spawnServer } from './support/process.js';
import { createTestDatabase } from './support/server.js';

// `kill -9` of the built server while 5 uploads stream and a project is being deleted, then a restart on the
// same DATA_DIR: every committed file is intact, no row lacks its bytes, every stored byte without a row is on
// the pending_objects ledger, and neither those objects nor temporary residue stay once the purge job finds
// them a day old.

const KiB = 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let dataDir: string;
let env: ServerEnv;
let sql: postgres.Sql;
let server: ServerProcess | null = null;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-crash-'));
  const databaseUrl = await createTestDatabase();
  // Deletes for good: the delete killed midway must leave its bytes to the purge at restart (the trash keeps them).
  env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, JWT_SECRET: 'crash-test-secret-crash-test-secret-0123456789', TRASH_RETENTION_DAYS: '0' };
  sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
});
afterAll(async () => {
  if (server?.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await sql?.end({ timeout: 1 });
  await rm(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('loses no committed byte and leaves no residue when killed mid-uploads and mid-delete', async () => {
  server = await spawnServer(env);
  const api = client(server.url);
  const owner = await userWithCut(api);
  const doomed = await userWithCut(api);
  for (let n = 0; n < 20; n++) {
    expect((await upload(api, doomed.token, doomed.cutId, `stem${n}.wav`, sampleBytes('wav', 64 * KiB + n))).status).toBe(201);
  }
  const cover = new FormData();
  cover.append('image', new Blob([new Uint8Array(sampleBytes('png', 2 * KiB))]), 'cover.png');
  expect((await api.request('PUT', `/api/projects/${doomed.projectId}`, { token: doomed.token, body: cover })).status).toBe(200);
  for (let n = 0; n < 3; n++) {
    expect((await upload(api, owner.token, owner.cutId, `kept${n}.flac`, sampleBytes('flac', 200 * KiB + n))).status).toBe(201);
  }

  // Five uploads that keep sending, at different stages when the server dies, and a project delete.
  const uploads = [1, 2, 3, 4, 5].map((n) => {
    const { contentType, head, tail } = multipartPieces(owner.cutId, `take${n}.wav`);
    return rawUpload(server!.url, owner.token, { 'content-type': contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.on('error', () => undefined);
      void (async () => {
        request.write(head);
        const chunks = n * 8;
        for (let i = 0; i < chunks && !request.destroyed; i++) {
          request.write(sampleBytes('wav', 32 * KiB));
          await sleep(5);
        }
        if (!request.destroyed) request.end(tail);
      })();
    });
  });
  await sleep(60);
  const deleting = api.request('DELETE', `/api/projects/${doomed.projectId}`, { token: doomed.token }).catch(() => null);
  // Killed the moment the delete has committed, while its bytes are being removed and uploads still stream.
  while ((await sql`select 1 from projects where id = ${doomed.projectId}`).length > 0) await sleep(1);
  server.child.kill('SIGKILL');
  await server.exited;
  const answered = (await Promise.all(uploads)).filter((response) => response?.status === 201).length;
  await deleting;

  server = await spawnServer({ ...env, LOG_LEVEL: 'info' });
  const rows = await sql<{ id: string; extension: string; size: string; sha256: string }[]>`select id, extension, size::text, sha256 from files`;
  for (const row of rows) {
    const bytes = await readFile(path.join(dataDir, 'files', `${row.id}.${row.extension}`));
    expect([row.id, bytes.length, sha256(bytes)]).toEqual([row.id, Number(row.size), row.sha256]);
  }
  const listed = new Set(rows.map((row) => `${row.id}.${row.extension}`));
  // The bytes of the committed delete are removed (after the commit, or by the purge at start). An upload killed
  // between its object and its row leaves that object: it is on the pending_objects ledger, never unknown.
  const pending = (await sql<{ key: string }[]>`select key from pending_objects`).map((row) => row.key);
  const unrecorded = (await readdir(path.join(dataDir, 'files'))).filter((name) => !listed.has(name)).map((name) => `files/${name}`);
  expect(unrecorded.filter((key) => !pending.includes(key))).toEqual([]);
  const images = await sql<{ image: string }[]>`select image from projects where image is not null union all select image from vibes where image is not null`;
  expect((await readdir(path.join(dataDir, 'images'))).sort()).toEqual(images.map((row) => row.image).sort());
  // The ledger's entries are nobody's to act on at start-up either: the purge job removes them once a day old.
  await sql`update pending_objects set created_at = now() - interval '1 day 1 minute'`;
  // The killed server's temporary uploads are nobody's to remove at start-up (another instance sharing DATA_DIR
  // could be writing them): the purge job removes them once they are a day old.
  const temporary = await readdir(path.join(dataDir, 'tmp'));
  expect(temporary.length).toBeLessThanOrEqual(5 - answered);
  const dayAndMinuteAgo = new Date(Date.now() - (24 * 60 + 1) * 60 * 1000);
  for (const name of temporary) await utimes(path.join(dataDir, 'tmp', name), dayAndMinuteAgo, dayAndMinuteAgo);
  const projectGone = (await sql`select 1 from projects where id = ${doomed.projectId}`).length === 0;
  expect(projectGone).toBe(true);
  expect(await sql`select 1 from removed_bytes`).toHaveLength(0);
  // Every upload that was answered 201 is committed; the 3 earlier ones too.
  const ownerRows = await sql`select 1 from files where uploaded_by = ${owner.user.user.id}`;
  expect(ownerRows.length).toBeGreaterThanOrEqual(3 + answered);

  const swept = /"removedBytes":(\d+)/.exec(server.output())?.[1] ?? '0';
  console.log(
    `crash test: ${rows.length} files compared byte for byte (${ownerRows.length - 3} of 5 in-flight uploads committed, ` +
      `${answered} answered), project delete committed, ${swept} of its 21 stored files' bytes (20 files, 1 image) removed by the purge at restart, ` +
      `${unrecorded.length} objects without a row, all on the pending_objects ledger`,
  );

  // Still serving after the restart.
  expect((await upload(client(server.url), owner.token, owner.cutId, 'after.wav', sampleBytes('wav', 10 * KiB))).status).toBe(201);
  server.child.kill('SIGTERM');
  await server.exited;
  // The purge job runs once at start: no temporary residue is left, and no object without its row.
  server = await spawnServer(env);
  expect(await readdir(path.join(dataDir, 'tmp'))).toEqual([]);
  expect(await sql`select key from pending_objects`).toEqual([]);
  const recorded = new Set((await sql<{ name: string }[]>`select id || '.' || extension as name from files`).map((row) => row.name));
  expect((await readdir(path.join(dataDir, 'files'))).filter((name) => !recorded.has(name))).toEqual([]);
  server.child.kill('SIGTERM');
  await server.exited;
});
