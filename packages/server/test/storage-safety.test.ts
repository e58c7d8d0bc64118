import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartPieces, rawUpload, sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { logLines, waitForLog } from './support/logs.js';
import { runServerCommand, spawnServer } from './support/process.js';
import { requirePrerequisite } from './support/prerequisites.js';
import { mountSmallDisk } from './support/small-disk.js';
import { s3TestEnv } from './support/s3.js';
import { startTestServer, type TestServer } from './support/server.js';
import { until } from './support/until.js';

// Storage safety: nothing moved or deleted at start-up, private modes, the free-disk floor, the quota.

const KiB = 1024;
const MiB = 1024 * KiB;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const modeOf = async (target: string) => (await stat(target)).mode & 0o777;
const problemCode = (response: { body: string } | null) => (response ? (JSON.parse(response.body) as { code: string }).code : 'no response');


function imageForm(name: string, image: Buffer): FormData {
  const form = new FormData();
  form.append('name', name);
  form.append('image', new Blob([new Uint8Array(image)]), 'cover.png');
  return form;
}

describe('stored files without a record', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-orphans-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('are left alone and counted in a warning at start-up; the orphans command lists, moves and purges those a day old, beside a running server', async () => {
    const first = await startTestServer({ DATA_DIR: dataDir });
    const api = client(first.url);
    const owner = await userWithCut(api);
    const audio = sampleBytes('wav', 3000);
    const uploaded = await upload(api, owner.token, owner.cutId, 'take.wav', audio);
    expect(uploaded.status).toBe(201);
    const project = await api.request('POST', '/api/projects', { token: owner.token, body: imageForm('Covered', sampleBytes('png', 700)) });
    expect(project.status).toBe(201);
    await first.close();
    // Bytes no row names: copied in by hand, or left by a restored older backup, a day ago.
    const strayFile = `${randomUUID()}.wav`;
    const strayImage = `${randomUUID()}.png`;
    await writeFile(path.join(dataDir, 'files', strayFile), sampleBytes('wav', 1234), { mode: 0o644 });
    await chmod(path.join(dataDir, 'files', strayFile), 0o644);
    await writeFile(path.join(dataDir, 'images', strayImage), sampleBytes('png', 300));
    const dayAndMinuteAgo = new Date(Date.now() - (24 * 60 + 1) * 60 * 1000);
    for (const stray of [path.join('files', strayFile), path.join('images', strayImage)]) await utimes(path.join(dataDir, stray), dayAndMinuteAgo, dayAndMinuteAgo);
    // Bytes another instance has just stored and is about to record: no orphan.
    const justStored = `${randomUUID()}.wav`;
    await writeFile(path.join(dataDir, 'files', justStored), sampleBytes('wav', 99));
    await writeFile(path.join(dataDir, 'tmp', 'streaming.part'), 'half an upload');
    const storedName = (uploaded.body.url as string).split('/').pop()!;
    const imageName = (project.body.imageUrl as string).split('/').pop()!;

    const second = await spawnServer({ ...first.env, PORT: '0', LOG_LEVEL: 'warn' });
    // Counted once the server is ready (the listing runs behind it): the two a day old, not the young one.
    const warning = await waitForLog(second.output, (line) => line.level === 'warn');
    expect(warning).toMatchObject({ count: 2, bytes: 1534, complete: true });
    expect(warning.msg).toBe(
      `2 stored file(s) without a record, 1534 bytes, unchanged for a day, in ${dataDir}: the orphans server command lists them (node packages/server/dist/main.js orphans), --move sets them aside under orphans/, --purge deletes them`,
    );
    expect(second.output().indexOf('listening on')).toBeLessThan(second.output().indexOf('without a record'));
    expect(logLines(second.output()).filter((line) => line.level === 'warn')).toHaveLength(1);
    expect((await readdir(path.join(dataDir, 'files'))).sort()).toEqual([storedName, strayFile, justStored].sort());
    expect((await readdir(path.join(dataDir, 'images'))).sort()).toEqual([imageName, strayImage].sort());
    expect(await readdir(path.join(dataDir, 'tmp'))).toEqual(['streaming.part']);

    const listed = await runServerCommand(['orphans'], first.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual([`1234\tfiles/${strayFile}`, `300\timages/${strayImage}`]);
    expect(listed.stderr).toContain('2 stored file(s) without a record, 1534 bytes');
    const moved = await runServerCommand(['orphans', '--move'], first.env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain('moved 2 file(s), 1534 bytes');
    expect((await readdir(path.join(dataDir, 'files'))).sort()).toEqual([storedName, justStored].sort());
    expect(await readdir(path.join(dataDir, 'orphans', 'files'))).toEqual([strayFile]);
    // 0600 as every stored file, whatever mode the stray had (0644 here, as a copy by hand leaves it).
    expect((await stat(path.join(dataDir, 'orphans', 'files', strayFile))).mode & 0o777).toBe(0o600);
    const again = await runServerCommand(['orphans'], first.env);
    expect(again.stdout.trim().split('\n')).toEqual([`1234\torphans/files/${strayFile}`, `300\torphans/images/${strayImage}`]);

    const wrong = await runServerCommand(['orphans', '--delete'], first.env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('orphans --purge');

    const purged = await runServerCommand(['orphans', '--purge'], first.env);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toContain('deleted 2 file(s), 1534 bytes');
    expect(await readdir(path.join(dataDir, 'orphans', 'files'))).toEqual([]);
    expect(await readdir(path.join(dataDir, 'orphans', 'images'))).toEqual([]);
    expect(sha256(await readFile(path.join(dataDir, 'files', storedName)))).toBe(sha256(audio));
    expect(await readdir(path.join(dataDir, 'images'))).toEqual([imageName]);
    expect(await readdir(path.join(dataDir, 'files'))).toContain(justStored);
    expect((await client(second.url).request('GET', `/api/files/${uploaded.body.id}/download`, { token: owner.token })).status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});

it('deletes the bytes of a committed delete that were left on disk in the purge job, also run at start (they are no orphans)', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-removed-'));
  // A delete for good (TRASH_RETENTION_DAYS=0) is what leaves bytes to the purge job.
  let server = await startTestServer({ DATA_DIR: dataDir, TRASH_RETENTION_DAYS: '0' });
  try {
    const api = client(server.url);
    const owner = await userWithCut(api);
    const kept = await upload(api, owner.token, owner.cutId, 'kept.wav', sampleBytes('wav', 1000));
    const gone = await upload(api, owner.token, owner.cutId, 'gone.wav', sampleBytes('wav', 2000));
    const project = await api.request('POST', '/api/projects', { token: owner.token, body: imageForm('Covered', sampleBytes('png', 300)) });
    const goneFile = path.join(dataDir, 'files', (gone.body.url as string).split('/').pop()!);
    const goneImage = path.join(dataDir, 'images', (project.body.imageUrl as string).split('/').pop()!);
    const leftBehind = [[goneFile, await readFile(goneFile)], [goneImage, await readFile(goneImage)]] as const;
    expect((await api.request('DELETE', `/api/files/${gone.body.id}`, { token: owner.token })).status).toBe(200);
    expect((await api.request('DELETE', `/api/projects/${project.body.id}`, { token: owner.token })).status).toBe(200);
    await server.close();
    // As if the server had died between the commits and the removal of the bytes.
    for (const [target, bytes] of leftBehind) await writeFile(target, bytes);

    server = await startTestServer({ DATA_DIR: dataDir, DATABASE_URL: server.env.DATABASE_URL!, TRASH_RETENTION_DAYS: '0' });
    expect(await readdir(path.join(dataDir, 'files'))).toEqual([(kept.body.url as string).split('/').pop()!]);
    expect(await readdir(path.join(dataDir, 'images'))).toEqual([]);
    expect(await readdir(path.join(dataDir, 'orphans', 'files'))).toEqual([]);
    expect(await readdir(path.join(dataDir, 'orphans', 'images'))).toEqual([]);
    expect(await server.sql`select 1 from removed_bytes`).toHaveLength(0);
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** A resumable upload's parts, written under resumable/ until it completes, are the server user's alone too. */
async function expectPrivateResumableParts(server: TestServer, owner: Awaited<ReturnType<typeof userWithCut>>): Promise<void> {
  const api = client(server.url);
  const tus = { 'tus-resumable': '1.0.0' };
  // More than one part (8 MiB under STORAGE=fs): what is below a part waits in PostgreSQL.
  const bytes = sampleBytes('zip', 8 * MiB + 100);
  const created = await api.request('POST', '/api/uploads', {
    token: owner.token,
    headers: { ...tus, 'upload-length': String(bytes.length + 1000), 'upload-metadata': `cutId ${btoa(owner.cutId)},filename ${btoa('g.zip')}` },
  });
  expect(created.status).toBe(201);
  const url = created.headers.get('location')!;
  const patched = await api.request('PATCH', url, {
    token: owner.token,
    body: new Uint8Array(bytes),
    headers: { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
  });
  expect(patched.status).toBe(204);
  const [row] = await server.sql<{ multipartId: string }[]>`select multipart_id as "multipartId" from resumable_uploads where id = ${path.basename(url)}`;
  expect(await modeOf(path.join(server.dataDir, 'resumable', row!.multipartId))).toBe(0o600);
}

describe('modes', () => {
  let server: TestServer | undefined;
  let dataDir: string;
  const previousUmask = process.umask();
  beforeAll(async () => {
    dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'bandcollab-modes-')), 'data');
  });
  afterAll(async () => {
    process.umask(previousUmask);
    await server?.close();
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  const directories = () => ['', 'files', 'images', 'tmp', 'orphans', 'orphans/files', 'orphans/images'].map((dir) => path.join(dataDir, dir));

  it('stores files and images 0600 in 0700 directories even with umask 000, and tightens existing ones at start-up', async () => {
    process.umask(0o000);
    server = await startTestServer({ DATA_DIR: dataDir });
    const api = client(server.url);
    const owner = await userWithCut(api);
    const file = await upload(api, owner.token, owner.cutId, 'open.wav', sampleBytes('wav', 2000));
    const project = await api.request('POST', '/api/projects', { token: owner.token, body: imageForm('Private', sampleBytes('png', 300)) });
    expect([file.status, project.status]).toEqual([201, 201]);
    const stored = [
      path.join(dataDir, 'files', (file.body.url as string).split('/').pop()!),
      path.join(dataDir, 'images', (project.body.imageUrl as string).split('/').pop()!),
    ];
    for (const dir of directories()) expect([dir, await modeOf(dir)]).toEqual([dir, 0o700]);
    for (const target of stored) expect([target, await modeOf(target)]).toEqual([target, 0o600]);
    await expectPrivateResumableParts(server, owner);

    await server.close();
    for (const dir of directories()) await chmod(dir, 0o777);
    for (const target of stored) await chmod(target, 0o666);
    server = await startTestServer({ DATA_DIR: dataDir, DATABASE_URL: server.env.DATABASE_URL! });
    for (const dir of directories()) expect([dir, await modeOf(dir)]).toEqual([dir, 0o700]);
    for (const target of stored) expect([target, await modeOf(target)]).toEqual([target, 0o600]);
  });
});

// DATA_DIR on a 16 MiB tmpfs with a 10 MiB floor: about 6 MiB of room, whatever else the machine does.
const floorDisk = await mountSmallDisk(16);
requirePrerequisite('a 16 MiB tmpfs', typeof floorDisk === 'string' ? floorDisk : null);
// At the top level, so the disk is unmounted even when a filter skips its tests.
afterAll(async () => {
  if (typeof floorDisk !== 'string') await floorDisk.unmount();
});

describe.skipIf(typeof floorDisk === 'string')('free-disk floor', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  beforeAll(async () => {
    if (typeof floorDisk === 'string') return;
    server = await startTestServer({ DATA_DIR: floorDisk.dir, MIN_FREE_DISK_MB: '10' });
    owner = await userWithCut(client(server.url));
  });
  afterAll(async () => {
    await server?.close();
  });

  const tempFiles = () => readdir(path.join(server.dataDir, 'tmp'));
  const fileRows = async () => Number((await server.sql`select count(*)::int as n from files`)[0]!.n);
  const tempBytes = async () => {
    let total = 0;
    for (const name of await tempFiles()) total += (await stat(path.join(server.dataDir, 'tmp', name)).catch(() => ({ size: 0 }))).size;
    return total;
  };

  it('refuses before reading when Content-Length says the upload would cross the floor', async () => {
    const { contentType, head } = multipartPieces(owner.cutId, 'big.zip');
    const response = await rawUpload(server.url, owner.token, { 'content-type': contentType, 'content-length': 7 * MiB }, (request) => {
      request.write(head);
    });
    expect(response?.status).toBe(507);
    expect(problemCode(response)).toBe('INSUFFICIENT_STORAGE');
    expect(response?.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await tempFiles()).toEqual([]);
  });

  it('refuses a resumable upload whose Upload-Length would cross the floor at its creation, as a multipart one (the one admission)', async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const response = await client(server.url).request('POST', '/api/uploads', {
      token: owner.token,
      headers: { 'tus-resumable': '1.0.0', 'upload-length': String(7 * MiB), 'upload-metadata': `cutId ${b64(owner.cutId)},filename ${b64('big.zip')}` },
    });
    expect(response.status).toBe(507);
    expect(response.body.code).toBe('INSUFFICIENT_STORAGE');
    expect(await server.sql`select 1 from resumable_uploads where owner_id = ${owner.user.user.id}`).toHaveLength(0);
  });

  it('refuses a chunked upload as soon as it crosses the floor, leaving nothing behind', async () => {
    const rowsBefore = await fileRows();
    const { contentType, head } = multipartPieces(owner.cutId, 'long.zip');
    const response = await rawUpload(server.url, owner.token, { 'content-type': contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.write(head);
      request.write(sampleBytes('zip', 7 * MiB));
    });
    expect(response?.status).toBe(507);
    expect(problemCode(response)).toBe('INSUFFICIENT_STORAGE');
    await until('the partial file to go', async () => (await tempFiles()).length === 0);
    expect(await fileRows()).toBe(rowsBefore);
  });

  it('lets only one of two parallel uploads that fit one at a time pass (announced sizes)', async () => {
    const first = multipartPieces(owner.cutId, 'first.zip');
    const size = 4 * MiB;
    let finishFirst = () => undefined as void;
    const firstResponse = rawUpload(
      server.url,
      owner.token,
      { 'content-type': first.contentType, 'content-length': first.head.length + size + first.tail.length },
      (request) => {
        const bytes = sampleBytes('zip', size);
        request.write(Buffer.concat([first.head, bytes.subarray(0, KiB)]));
        finishFirst = () => void request.end(Buffer.concat([bytes.subarray(KiB), first.tail]));
      },
    );
    await until('the first upload to start', async () => (await tempFiles()).length === 1);
    const second = multipartPieces(owner.cutId, 'second.zip');
    const secondResponse = await rawUpload(
      server.url,
      owner.token,
      { 'content-type': second.contentType, 'content-length': second.head.length + size + second.tail.length },
      (request) => request.end(Buffer.concat([second.head, sampleBytes('zip', size), second.tail])),
    );
    expect(secondResponse?.status).toBe(507);
    expect(problemCode(secondResponse)).toBe('INSUFFICIENT_STORAGE');
    finishFirst();
    expect((await firstResponse)?.status).toBe(201);
    await server.sql`delete from files`;
    await rm(path.join(server.dataDir, 'files'), { recursive: true });
    await mkdir(path.join(server.dataDir, 'files'), { mode: 0o700 });
  });

  it('lets only one of two parallel chunked uploads pass: bytes in flight count', async () => {
    const size = 4 * MiB;
    const first = multipartPieces(owner.cutId, 'first.zip');
    let finishFirst = () => undefined as void;
    const firstResponse = rawUpload(server.url, owner.token, { 'content-type': first.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.write(Buffer.concat([first.head, sampleBytes('zip', size)]));
      finishFirst = () => void request.end(first.tail);
    });
    // busboy may hold back a few bytes that could start the boundary.
    await until('the first upload to arrive', async () => (await tempBytes()) >= size - KiB);
    const second = multipartPieces(owner.cutId, 'second.zip');
    const secondResponse = await rawUpload(server.url, owner.token, { 'content-type': second.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.end(Buffer.concat([second.head, sampleBytes('zip', size), second.tail]));
    });
    expect(secondResponse?.status).toBe(507);
    expect(problemCode(secondResponse)).toBe('INSUFFICIENT_STORAGE');
    finishFirst();
    expect((await firstResponse)?.status).toBe(201);
    await until('no temporary files', async () => (await tempFiles()).length === 0);
    // Still serving: a small upload fits.
    expect((await upload(client(server.url), owner.token, owner.cutId, 'small.wav', sampleBytes('wav', 10 * KiB))).status).toBe(201);
  });
});

// DATA_DIR on an 8 MiB tmpfs without a floor: the disk itself fills up.
const fullDisk = await mountSmallDisk(8);
requirePrerequisite('an 8 MiB tmpfs', typeof fullDisk === 'string' ? fullDisk : null);
afterAll(async () => {
  if (typeof fullDisk !== 'string') await fullDisk.unmount();
});

describe.skipIf(typeof fullDisk === 'string')('disk full', () => {
  let server: TestServer;
  beforeAll(async () => {
    if (typeof fullDisk === 'string') return;
    server = await startTestServer({ DATA_DIR: fullDisk.dir, MIN_FREE_DISK_MB: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers 507 on ENOSPC, removes the partial file, and keeps serving', async () => {
    const api = client(server.url);
    const owner = await userWithCut(api);
    const tempFiles = () => readdir(path.join(server.dataDir, 'tmp'));
    const { contentType, head, tail } = multipartPieces(owner.cutId, 'fills.zip');
    const filler = path.join(server.dataDir, 'filler');
    const response = await rawUpload(server.url, owner.token, { 'content-type': contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.write(Buffer.concat([head, sampleBytes('zip', 256 * KiB)]));
      void (async () => {
        await until('the upload to start', async () => (await tempFiles()).length === 1);
        // Another writer takes the space the server measured as free.
        await writeFile(filler, Buffer.alloc(7 * MiB)).catch(() => undefined);
        request.end(Buffer.concat([sampleBytes('zip', 2 * MiB), tail]));
      })();
    });
    expect(response?.status).toBe(507);
    expect(problemCode(response)).toBe('INSUFFICIENT_STORAGE');
    await until('the partial file to go', async () => (await tempFiles()).length === 0);
    expect(await readdir(path.join(server.dataDir, 'files'))).toEqual([]);
    expect(Number((await server.sql`select count(*)::int as n from files`)[0]!.n)).toBe(0);

    await rm(filler);
    const after = await upload(api, owner.token, owner.cutId, 'after.wav', sampleBytes('wav', 100 * KiB));
    expect(after.status).toBe(201);
  });
});

describe('quota', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    // Deletes for good (TRASH_RETENTION_DAYS=0) free quota at once; trash.test.ts counts trashed bytes.
    server = await startTestServer({ USER_QUOTA_MB: '1', TRASH_RETENTION_DAYS: '0' });
    api = client(server.url);
  });
  afterAll(() => server?.close());

  const tempFiles = () => readdir(path.join(server.dataDir, 'tmp'));
  const quotaOf = async (token: string) => (await api.request('GET', '/api/files/storage', { token })).body.quota;

  it('counts files and images, and refuses what would cross it: before reading, and while streaming', async () => {
    const owner = await userWithCut(api);
    expect(await quotaOf(owner.token)).toEqual({ limitBytes: MiB, usedBytes: 0 });
    expect((await upload(api, owner.token, owner.cutId, 'a.wav', sampleBytes('wav', 600 * KiB))).status).toBe(201);
    const project = await api.request('POST', '/api/projects', { token: owner.token, body: imageForm('Cover', sampleBytes('png', 100 * KiB)) });
    expect(project.status).toBe(201);
    expect(await quotaOf(owner.token)).toEqual({ limitBytes: MiB, usedBytes: 700 * KiB });

    const announced = multipartPieces(owner.cutId, 'b.wav');
    const early = await rawUpload(server.url, owner.token, { 'content-type': announced.contentType, 'content-length': 400 * KiB }, (request) => {
      request.write(announced.head);
    });
    expect(early?.status).toBe(507);
    expect(problemCode(early)).toBe('QUOTA_EXCEEDED');
    expect(await tempFiles()).toEqual([]);

    const streamed = multipartPieces(owner.cutId, 'c.wav');
    const late = await rawUpload(server.url, owner.token, { 'content-type': streamed.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.end(Buffer.concat([streamed.head, sampleBytes('wav', 400 * KiB), streamed.tail]));
    });
    expect(late?.status).toBe(507);
    expect(problemCode(late)).toBe('QUOTA_EXCEEDED');
    await until('the partial file to go', async () => (await tempFiles()).length === 0);

    const image = await api.request('PUT', `/api/projects/${owner.projectId}`, { token: owner.token, body: imageForm('Bigger', sampleBytes('png', 400 * KiB)) });
    expect(image.status).toBe(507);
    expect(image.body.code).toBe('QUOTA_EXCEEDED');
    expect(await quotaOf(owner.token)).toEqual({ limitBytes: MiB, usedBytes: 700 * KiB });
    expect((await upload(api, owner.token, owner.cutId, 'fits.wav', sampleBytes('wav', 300 * KiB))).status).toBe(201);
  });

  it('lets only one of two parallel uploads of one user pass when both would not fit', async () => {
    const owner = await userWithCut(api);
    const size = 600 * KiB;
    const first = multipartPieces(owner.cutId, 'first.wav');
    let finishFirst = () => undefined as void;
    const firstResponse = rawUpload(server.url, owner.token, { 'content-type': first.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.write(Buffer.concat([first.head, sampleBytes('wav', size)]));
      finishFirst = () => void request.end(first.tail);
    });
    // All of the first's bytes on disk, so all counted: the second then crosses the quota, never the first.
    const firstOnDisk = async () => {
      const names = await tempFiles();
      return names.length === 1 && (await stat(path.join(server.dataDir, 'tmp', names[0]!)).catch(() => ({ size: 0 }))).size === size;
    };
    await until('the first upload to have sent its bytes', firstOnDisk);
    const second = multipartPieces(owner.cutId, 'second.wav');
    const secondResponse = await rawUpload(server.url, owner.token, { 'content-type': second.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.end(Buffer.concat([second.head, sampleBytes('wav', size), second.tail]));
    });
    expect(secondResponse?.status).toBe(507);
    expect(problemCode(secondResponse)).toBe('QUOTA_EXCEEDED');
    finishFirst();
    expect((await firstResponse)?.status).toBe(201);
    expect(await quotaOf(owner.token)).toEqual({ limitBytes: MiB, usedBytes: size });
  });

  it('counts a file upload in flight against an image upload of the same user', async () => {
    const owner = await userWithCut(api);
    const file = multipartPieces(owner.cutId, 'long.wav');
    let finishFile = () => undefined as void;
    const fileResponse = rawUpload(server.url, owner.token, { 'content-type': file.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.write(Buffer.concat([file.head, sampleBytes('wav', 600 * KiB)]));
      finishFile = () => void request.end(file.tail);
    });
    // All of the file's bytes on disk, so all counted: the image then crosses the quota, never the file.
    const fileOnDisk = async () => {
      const names = await tempFiles();
      return names.length === 1 && (await stat(path.join(server.dataDir, 'tmp', names[0]!)).catch(() => ({ size: 0 }))).size === 600 * KiB;
    };
    await until('the file upload to have sent its bytes', fileOnDisk);
    const image = await api.request('PUT', `/api/projects/${owner.projectId}`, { token: owner.token, body: imageForm('Cover', sampleBytes('png', 500 * KiB)) });
    expect(image.status).toBe(507);
    expect(image.body.code).toBe('QUOTA_EXCEEDED');
    finishFile();
    expect((await fileResponse)?.status).toBe(201);
  });

  it('counts incomplete resumable uploads at their whole length: a creation that would cross the quota is refused', async () => {
    const owner = await userWithCut(api);
    const tus = { 'tus-resumable': '1.0.0' };
    const create = (fileName: string, length: number) =>
      api.request('POST', '/api/uploads', {
        token: owner.token,
        headers: { ...tus, 'upload-length': String(length), 'upload-metadata': `cutId ${btoa(owner.cutId)},filename ${btoa(fileName)}` },
      });
    const first = await create('first.wav', 600 * KiB);
    expect(first.status).toBe(201);
    // Nothing of it has arrived, and it holds its length: a second that would not fit with it is refused.
    const second = await create('second.wav', 600 * KiB);
    expect(second.status).toBe(507);
    expect(second.body.code).toBe('QUOTA_EXCEEDED');
    const multipart = await upload(api, owner.token, owner.cutId, 'beside.wav', sampleBytes('wav', 600 * KiB));
    expect(multipart.status).toBe(507);
    // Its own bytes fit the room it holds, to the end; then the file counts instead.
    const bytes = sampleBytes('wav', 600 * KiB);
    const done = await api.request('PATCH', first.headers.get('location')!, {
      token: owner.token,
      body: new Uint8Array(bytes),
      headers: { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
    });
    expect(done.status).toBe(204);
    expect(await quotaOf(owner.token)).toEqual({ limitBytes: MiB, usedBytes: 600 * KiB });
    const third = await create('third.wav', 400 * KiB);
    expect(third.status).toBe(201);
    expect((await api.request('DELETE', third.headers.get('location')!, { token: owner.token, headers: tus })).status).toBe(204);
    expect((await create('fourth.wav', 400 * KiB)).status).toBe(201);
  });

  it('frees quota when a file is deleted, and counts no one else', async () => {
    const owner = await userWithCut(api);
    const first = await upload(api, owner.token, owner.cutId, 'x.wav', sampleBytes('wav', 900 * KiB));
    expect(first.status).toBe(201);
    expect((await api.request('DELETE', `/api/files/${first.body.id}`, { token: owner.token })).status).toBe(200);
    expect(await quotaOf(owner.token)).toEqual({ limitBytes: MiB, usedBytes: 0 });
    expect((await upload(api, owner.token, owner.cutId, 'y.wav', sampleBytes('wav', 900 * KiB))).status).toBe(201);
  });
});

describe('the free-disk floor with STORAGE=s3', () => {
  // A floor no disk can keep (the largest MIN_FREE_DISK_MB): on the local driver every upload is refused.
  const UNREACHABLE_FLOOR_MB = '1048576000';

  it('refuses nothing: the bytes go to the bucket, not to DATA_DIR, which holds only state', async () => {
    const onS3 = await startTestServer({ ...(await s3TestEnv()), MIN_FREE_DISK_MB: UNREACHABLE_FLOOR_MB });
    const onDisk = await startTestServer({ STORAGE: 'fs', MIN_FREE_DISK_MB: UNREACHABLE_FLOOR_MB });
    try {
      for (const [server, status] of [[onS3, 201], [onDisk, 507]] as const) {
        const owner = await userWithCut(client(server.url));
        const uploaded = await upload(client(server.url), owner.token, owner.cutId, 'take.wav', sampleBytes('wav', 100 * KiB));
        expect(uploaded.status, `STORAGE=${server.config.storage.driver}`).toBe(status);
      }
    } finally {
      await onS3.close();
      await onDisk.close();
    }
  });
});
