/**
 * A DATA_DIR belongs to one database: a server started on it with another database refuses with one line and
 * changes nothing; one with the same database beside a running one is another instance sharing it. As root with the embedded database, a DATA_DIR at
 * 0700 (restored with rsync or tar) is opened to the postgres user instead of failing inside PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdtemp, readdir, readFile, rm, stat, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { runServerCommand, type ServerProcess, spawnServer } from './support/process.js';
import { createTestDatabase } from './support/server.js';

/** Every entry under `dir`: its mode, and for files their size, modification time and sha256. */
async function tree(dir: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  const walk = async (current: string) => {
    for (const name of (await readdir(current)).sort()) {
      const target = path.join(current, name);
      const info = await lstat(target);
      const key = path.relative(dir, target);
      if (info.isDirectory()) {
        entries[key] = `dir ${(info.mode & 0o777).toString(8)}`;
        await walk(target);
      } else {
        const digest = createHash('sha256').update(await readFile(target)).digest('hex');
        entries[key] = `file ${(info.mode & 0o777).toString(8)} ${info.size} ${info.mtimeMs} ${digest}`;
      }
    }
  };
  entries['.'] = `dir ${((await stat(dir)).mode & 0o777).toString(8)}`;
  await walk(dir);
  return entries;
}

const databaseName = (url: string) => new URL(url).pathname.slice(1);

async function hasTables(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from pg_tables where schemaname = 'public'`;
    return row!.count > 0;
  } finally {
    await sql.end();
  }
}

describe('a DATA_DIR and its database', () => {
  let dataDir: string;
  let running: ServerProcess | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-data-dir-'));
  });
  afterAll(async () => {
    running?.child.kill('SIGKILL');
    await running?.exited;
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuse a second server with another database, beside the running one and after it, with one line naming both, changing nothing; take one with the same database as another instance', async () => {
    const own = await createTestDatabase();
    const env = { DATA_DIR: dataDir, DATABASE_URL: own, JWT_SECRET: 'data-dir-secret-data-dir-secret-0123456789' };
    running = await spawnServer(env);
    const api = client(running.url);
    const owner = await userWithCut(api);
    const stored = await upload(api, owner.token, owner.cutId, 'take.wav', sampleBytes('wav', 4000));
    expect(stored.status).toBe(201);
    const before = await tree(dataDir);

    const other = await createTestDatabase();
    const beside = await runServerCommand([], { ...env, DATABASE_URL: other, PORT: '0' });
    expect(beside.code).toBe(1);
    expect(beside.stdout).toBe('');
    expect(beside.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(beside.stderr).toContain(`DATA_DIR ${dataDir} holds the files of ${databaseName(own)} on 127.0.0.1`);
    expect(beside.stderr).toContain(`not of ${databaseName(other)} on 127.0.0.1`);
    expect(await tree(dataDir)).toEqual(before);
    expect(await hasTables(other)).toBe(false);
    // The running server still serves its file.
    const download = await api.request('GET', `/api/files/${stored.body.id}/download`, { token: owner.token });
    expect(download.status).toBe(200);

    // The same database beside the running server: a second instance sharing the DATA_DIR, which serves the
    // stored file and moves or deletes nothing.
    const storedBefore = await tree(path.join(dataDir, 'files'));
    const twin = await spawnServer(env);
    expect((await client(twin.url).request('GET', `/api/files/${stored.body.id}/download`, { token: owner.token })).status).toBe(200);
    twin.child.kill('SIGTERM');
    expect(await twin.exited).toBe(0);
    expect(await tree(path.join(dataDir, 'files'))).toEqual(storedBefore);

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    running = undefined;
    const stopped = await tree(dataDir);
    const after = await runServerCommand([], { ...env, DATABASE_URL: other, PORT: '0' });
    expect(after.code).toBe(1);
    expect(after.stderr).toContain(`holds the files of ${databaseName(own)} on 127.0.0.1`);
    expect(await tree(dataDir)).toEqual(stopped);
    expect(await hasTables(other)).toBe(false);

    // Without DATABASE_URL: refused before an embedded database is initialised in it.
    const embedded = await runServerCommand([], { DATA_DIR: dataDir, JWT_SECRET: env.JWT_SECRET, PORT: '0' });
    expect(embedded.code).toBe(1);
    expect(embedded.stderr).toContain(`holds the files of ${databaseName(own)} on 127.0.0.1`);
    expect(embedded.stderr).toContain('not of the embedded PostgreSQL in DATA_DIR/postgres');
    expect(await tree(dataDir)).toEqual(stopped);

    // Its own database again: it starts, and the file is still served.
    running = await spawnServer(env);
    expect((await client(running.url).request('GET', `/api/files/${stored.body.id}/download`, { token: owner.token })).status).toBe(200);
  });
});

describe.skipIf(process.getuid?.() !== 0)('as root, on the embedded database', () => {
  let dataDir: string;
  beforeAll(async () => {
    // mkdtemp makes it 0700: as a DATA_DIR restored with rsync -a or tar keeps it.
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-data-dir-0700-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('opens a DATA_DIR at 0700 to the postgres user (0711) and starts, at the first start and after a restore', async () => {
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const first = await spawnServer({ DATA_DIR: dataDir });
    expect((await stat(dataDir)).mode & 0o777).toBe(0o711);
    const registered = await client(first.url).register({ email: 'root@example.com', password: 'password-123' });
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    await chmod(dataDir, 0o700);
    const restored = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    expect(restored.output()).toContain('DATA_DIR was closed to the postgres user');
    const me = await client(restored.url).request('GET', '/api/auth/me', { token: registered.accessToken });
    expect(me.status).toBe(200);
    restored.child.kill('SIGTERM');
    expect(await restored.exited).toBe(0);
  });
});
