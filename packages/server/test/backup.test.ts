import { createHash } from 'node:crypto';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { runServerCommand, spawnServer } from './support/process.js';
import { ownStorage } from './support/s3.js';
import { createTestDatabase, startTestServer, type TestServer } from './support/server.js';
import { type StoredObjects, storedObjectsOf } from './support/stored.js';

// The built server's `backup` and `restore` commands, run as an admin would, beside a running server. On the
// local directory, whatever TEST_STORAGE says: a backup on S3 lists objects instead (backup-s3.test.ts).
let server: TestServer;
let scratch: string;

beforeAll(async () => {
  server = await startTestServer({ STORAGE: 'fs' });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-backup-'));
  // Run as root, the embedded PostgreSQL of a restored DATA_DIR runs as "postgres", which must pass through.
  await chmod(scratch, 0o711);
  const api = client(server.url);
  const { token, cutId, vibeId } = await userWithCut(api);
  for (const [name, bytes] of [['take.wav', sampleBytes('wav', 300_000)], ['stems.zip', sampleBytes('zip', 5000)], ['mix.mp3', sampleBytes('mp3', 70_000)]] as const) {
    expect((await upload(api, token, cutId, name, bytes)).status).toBe(201);
  }
  const cover = new FormData();
  cover.append('name', 'With a cover');
  cover.append('image', new Blob([new Uint8Array(sampleBytes('png', 40_000))]), 'cover.png');
  expect((await api.request('POST', '/api/projects', { token, body: cover })).status).toBe(201);
  const vibeImage = new FormData();
  vibeImage.append('image', new Blob([new Uint8Array(sampleBytes('jpg', 20_000))]), 'vibe.jpg');
  expect((await api.request('PUT', `/api/vibes/${vibeId}`, { token, body: vibeImage })).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/**
 * A copy of one backup of the server as the first tests leave it (the tests from here on change nothing it
 * holds): each test that only needs a backup to work on gets its own copy instead of running `backup` again,
 * a server process of its own.
 */
let snapshot: Promise<string> | undefined;
async function copyOfBackup(name: string): Promise<string> {
  snapshot ??= (async () => {
    const made = path.join(scratch, 'snapshot');
    const result = await runServerCommand(['backup', made], server.env);
    expect(result.code, result.stderr).toBe(0);
    return made;
  })();
  const copy = path.join(scratch, name);
  await cp(await snapshot, copy, { recursive: true });
  return copy;
}

async function rowCounts(sql: postgres.Sql): Promise<Record<string, number>> {
  const tables = await sql<{ name: string }[]>`select tablename as name from pg_tables where schemaname = current_schema() order by 1`;
  const counts: Record<string, number> = {};
  for (const { name } of tables) counts[name] = (await sql<{ n: number }[]>`select count(*)::int as n from ${sql(name)}`)[0]!.n;
  return counts;
}

/** `files/<name>` and `images/<name>` in a store (DATA_DIR or bucket), each with its sha256. */
async function storedHashes(stored: StoredObjects): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const kind of ['files', 'images'] as const) {
    for (const name of await stored.list(kind)) {
      hashes[`${kind}/${name}`] = createHash('sha256').update(await stored.read(`${kind}/${name}`)).digest('hex');
    }
  }
  return hashes;
}

/** The hashes of what a server started with `env` stores. */
async function storedHashesOf(env: Record<string, string>): Promise<Record<string, string>> {
  const stored = await storedObjectsOf(env);
  try {
    return await storedHashes(stored);
  } finally {
    stored.close();
  }
}

describe('backup and restore', () => {
  it('round-trips every row and every stored file into a fresh DATA_DIR and database, taken beside the running server', async () => {
    const backup = path.join(scratch, 'round-trip');
    // Both servers' row counts are compared: the background analysis of the uploads must be over first.
    while ((await server.sql`select count(*)::int as n from jobs where kind = 'analysis' and state in ('queued', 'running')`)[0]!.n > 0) await delay(100);
    // A stored file without a row (an upload not yet recorded) is not part of the snapshot.
    await server.stored.write('files/not-recorded.wav', sampleBytes('wav', 100));
    const made = await runServerCommand(['backup', backup], server.env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^backed up to .*: \d+ tables, \d+ rows, 5 stored file\(s\), 424\.8 KiB \(435000 bytes\)\n$/);
    const manifest = JSON.parse(await readFile(path.join(backup, 'manifest.json'), 'utf8'));
    expect(manifest.files.map((f: { path: string }) => f.path)).not.toContain('files/not-recorded.wav');

    const dataDir = path.join(scratch, 'restored-data');
    const databaseUrl = await createTestDatabase();
    const target = { ...server.env, ...(await ownStorage()), DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
    const restored = await runServerCommand(['restore', backup], target);
    expect(restored.code, restored.stderr).toBe(0);

    const again = await startTestServer(target);
    try {
      const { ['files/not-recorded.wav']: notRecorded, ...original } = await storedHashes(server.stored);
      expect(notRecorded).toBeDefined();
      expect(Object.keys(original)).toHaveLength(5);
      expect(await storedHashes(again.stored)).toEqual(original);
      expect(await rowCounts(again.sql)).toEqual(await rowCounts(server.sql));
      expect(manifest.tables.find((t: { name: string }) => t.name === 'files').rows).toBe(3);
      // The restored server serves what it holds.
      const [file] = await again.sql<{ id: string }[]>`select id from files where size = 70000`;
      const login = await client(again.url).request('POST', '/api/auth/login', { json: { email: (await again.sql`select email from users`)[0]!.email, password: 'correct horse battery' } });
      const downloaded = await fetch(`${again.url}/api/files/${file!.id}/download`, { headers: { authorization: `Bearer ${login.body.accessToken}` } });
      expect(Buffer.from(await downloaded.arrayBuffer())).toEqual(sampleBytes('mp3', 70_000));
    } finally {
      await again.close();
      await server.stored.delete('files/not-recorded.wav');
    }

    const twice = await runServerCommand(['restore', backup], target);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^restore refused: the database is not empty/);
  });

  it('is consistent while users upload and delete files: every file row of the snapshot has its bytes, and no more', async () => {
    const api = client(server.url);
    const { token, cutId } = await userWithCut(api);
    let busy = true;
    let rounds = 0;
    const churn = (async () => {
      while (busy) {
        const uploaded = await upload(api, token, cutId, `churn-${rounds}.wav`, sampleBytes('wav', 50_000 + rounds));
        expect(uploaded.status).toBe(201);
        if (rounds % 2 === 0) expect((await api.request('DELETE', `/api/files/${uploaded.body.id}`, { token })).status).toBe(200);
        rounds += 1;
      }
    })();
    const backup = path.join(scratch, 'busy');
    const made = await runServerCommand(['backup', backup], server.env).finally(() => (busy = false));
    await churn;
    expect(made.code, made.stderr).toBe(0);
    expect(rounds).toBeGreaterThan(0);
    const manifest = JSON.parse(await readFile(path.join(backup, 'manifest.json'), 'utf8'));
    const fileRows = manifest.tables.find((t: { name: string }) => t.name === 'files').rows;
    expect(manifest.files.filter((f: { path: string }) => f.path.startsWith('files/'))).toHaveLength(fileRows);
    expect((await readdir(path.join(backup, 'files'))).length).toBe(fileRows);
  });

  it('refuses a non-empty backup directory, and a backup whose files do not match the manifest', async () => {
    const backup = await copyOfBackup('tampered');
    const again = await runServerCommand(['backup', backup], server.env);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/^backup refused: the backup directory is not empty/) });

    const [table] = (await readdir(path.join(backup, 'database'))).sort();
    await writeFile(path.join(backup, 'database', table!), 'tampered\n');
    const target = { ...server.env, ...(await ownStorage()), DATA_DIR: path.join(scratch, 'tampered-data'), DATABASE_URL: await createTestDatabase() };
    const refused = await runServerCommand(['restore', backup], target);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('does not match its sha256 in the manifest') });
  });

  it("refuses to restore into a store that holds the backup's stored files (the running server's own), and leaves them as they are", async () => {
    const backup = await copyOfBackup('onto-itself');
    const before = await storedHashes(server.stored);
    // A fresh database on the server's own stored bytes: its DATA_DIR, or under STORAGE=s3 its bucket.
    const refused = await runServerCommand(['restore', backup], { ...server.env, DATABASE_URL: await createTestDatabase() });
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^restore refused: .*(is not empty|already holds)/) });
    expect(await storedHashes(server.stored)).toEqual(before);
  });

  it('refuses a manifest whose paths leave the backup folder: .., absolute paths, symbolic links', async () => {
    const backup = await copyOfBackup('escaping');
    const original = await readFile(path.join(backup, 'manifest.json'), 'utf8');
    // A copy outside the backup with the same bytes, so only the path check can tell them apart.
    const outside = path.join(scratch, 'outside');
    await mkdir(outside, { recursive: true });
    const manifest = JSON.parse(original);
    const table = manifest.tables[0].path as string;
    const file = manifest.files[0].path as string;
    await copyFile(path.join(backup, table), path.join(outside, path.basename(table)));
    await copyFile(path.join(backup, file), path.join(outside, path.basename(file)));

    const restoreWith = async (edit: (m: typeof manifest) => void) => {
      const edited = JSON.parse(original);
      edit(edited);
      await writeFile(path.join(backup, 'manifest.json'), JSON.stringify(edited));
      const target = { ...server.env, ...(await ownStorage()), DATA_DIR: await mkdtemp(path.join(scratch, 'escaping-data-')), DATABASE_URL: await createTestDatabase() };
      return runServerCommand(['restore', backup], target);
    };
    const refusal = (shown: string) => ({ code: 1, stderr: expect.stringContaining(`the manifest lists an unsafe path ${shown}`) });

    const upTable = `database/../../outside/${path.basename(table)}`;
    expect(await restoreWith((m) => (m.tables[0].path = upTable))).toMatchObject(refusal(upTable));
    const upFile = `${file}/../../../outside/${path.basename(file)}`;
    expect(await restoreWith((m) => (m.files[0].path = upFile))).toMatchObject(refusal(upFile));
    const absolute = path.join(outside, path.basename(table));
    expect(await restoreWith((m) => (m.tables[0].path = absolute))).toMatchObject(refusal(absolute));

    await rm(path.join(backup, table));
    await symlink(path.join(outside, path.basename(table)), path.join(backup, table));
    expect(await restoreWith(() => undefined)).toMatchObject(refusal(table));
    await rm(path.join(backup, table));
    await copyFile(path.join(outside, path.basename(table)), path.join(backup, table));
    await rm(path.join(backup, 'files'), { recursive: true });
    await symlink(path.join(server.dataDir, 'files'), path.join(backup, 'files'));
    expect(await restoreWith(() => undefined)).toMatchObject(refusal(file));
  });

  it('restores onto a new DATA_DIR with the embedded database, and refuses a DATA_DIR that holds anything', async () => {
    const backup = await copyOfBackup('for-embedded');
    const { DATABASE_URL: _external, ...shared } = server.env;
    const embedded = { ...shared, ...(await ownStorage()) };

    const used = path.join(scratch, 'used-data');
    await mkdir(used);
    await writeFile(path.join(used, 'jwt-secret'), 'x'.repeat(40));
    const refused = await runServerCommand(['restore', backup], { ...embedded, DATA_DIR: used });
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^restore refused: DATA_DIR is not empty/) });

    const dataDir = path.join(scratch, 'embedded-data');
    const restored = await runServerCommand(['restore', backup], { ...embedded, DATA_DIR: dataDir });
    expect(restored.code, restored.stderr).toBe(0);
    expect(await storedHashesOf({ ...embedded, DATA_DIR: dataDir })).toEqual(await storedHashes(server.stored));
    const started = await spawnServer({ ...embedded, DATA_DIR: dataDir });
    try {
      const email = (await server.sql<{ email: string }[]>`select email from users`)[0]!.email;
      const login = await client(started.url).request('POST', '/api/auth/login', { json: { email, password: 'correct horse battery' } });
      const projects = await client(started.url).request('GET', '/api/projects', { token: login.body.accessToken });
      expect(projects.body.map((p: { name: string }) => p.name).sort()).toEqual((
          await server.sql<{ name: string }[]>`
            select p.name from projects p join project_members m on m.project_id = p.id join users u on u.id = m.user_id
            where u.email = ${email} order by p.name`
        ).map((p) => p.name));
    } finally {
      started.child.kill('SIGTERM');
      await started.exited;
    }
  }, 120_000);

  it('prints the usage and exits 2 without a directory', async () => {
    const result = await runServerCommand(['backup'], server.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('backup <dir>');
  });
});
