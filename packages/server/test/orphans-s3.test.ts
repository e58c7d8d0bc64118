import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOrphans } from '../src/operations/orphans.js';
import { StoredObjects } from '../src/core/stored-objects.js';
import { Logger } from '../src/core/logger.js';
import { openBlobStore } from '../src/core/store/index.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { runServerCommand } from './support/process.js';
import { s3TestEnv } from './support/s3.js';
import { startTestServer, TestClock, type TestServer } from './support/server.js';

// On STORAGE=s3 the `orphans` command lists the bucket (under S3_PREFIX), not DATA_DIR. Objects in fauxqs cannot
// be back-dated, so the finder runs in-process with a clock a day ahead; the real command proves that fresh
// objects (an upload between storing and recording on a running server) are left alone.
const DAY_AND_MINUTE_SECONDS = 24 * 60 * 60 + 60;

let server: TestServer;
let owner: Awaited<ReturnType<typeof userWithCut>>;
let recorded: string[];
const strayFile = `files/${randomUUID()}.wav`;
const strayImage = `images/${randomUUID()}.png`;
const pendingKey = `files/${randomUUID()}.mp3`;
// More than one ListObjectsV2 page (1000 keys): the listing follows continuation tokens.
const manyStrays = Array.from({ length: 1001 }, () => `files/${randomUUID()}.mp3`);

beforeAll(async () => {
  server = await startTestServer({ ...(await s3TestEnv()), S3_PREFIX: 'tenant-a/' });
  const api = client(server.url);
  owner = await userWithCut(api);
  const uploaded = await upload(api, owner.token, owner.cutId, 'take.wav', sampleBytes('wav', 3000));
  expect(uploaded.status).toBe(201);
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(sampleBytes('png', 700))]), 'cover.png');
  const vibe = await api.request('PUT', `/api/vibes/${owner.vibeId}`, { token: owner.token, body: form });
  expect(vibe.status).toBe(200);
  recorded = [`files/${uploaded.body.id}.wav`, `images/${path.basename(vibe.body.imageUrl)}`];

  // Objects no row names: copied in, left by a restored older database.
  await server.stored.write(strayFile, sampleBytes('wav', 1234));
  await server.stored.write(strayImage, sampleBytes('png', 300));
  for (let at = 0; at < manyStrays.length; at += 50) {
    await Promise.all(manyStrays.slice(at, at + 50).map((key) => server.stored.write(key, 'x')));
  }
  // An upload being written: on the pending_objects ledger, not recorded yet.
  await server.sql`insert into pending_objects (key) values (${pendingKey})`;
  await server.stored.write(pendingKey, sampleBytes('mp3', 500));
  // Another server's object in the same bucket, outside this one's S3_PREFIX.
  const storage = server.config.storage as Extract<typeof server.config.storage, { driver: 's3' }>;
  const s3 = new S3Client({ region: storage.region, endpoint: storage.endpoint!, forcePathStyle: storage.forcePathStyle, credentials: storage.credentials! });
  await s3.send(new PutObjectCommand({ Bucket: storage.bucket, Key: `tenant-b/files/${randomUUID()}.wav`, Body: 'not ours' }));
  s3.destroy();
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe('orphans on S3', () => {
  it('the command leaves fresh objects alone beside the running server, and prints the usage on wrong arguments', async () => {
    const listed = await runServerCommand(['orphans'], server.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toContain(`0 stored object(s) without a record, 0 bytes, in bucket ${server.env.S3_BUCKET} under tenant-a/`);
    const purged = await runServerCommand(['orphans', '--purge'], server.env);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toBe('deleted 0 object(s), 0 bytes\n');
    const moved = await runServerCommand(['orphans', '--move'], server.env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toBe('moved 0 object(s), 0 bytes, to orphans/\n');
    for (const key of [strayFile, strayImage, pendingKey, ...recorded]) expect(await server.stored.exists(key)).toBe(true);

    // Another S3_PREFIX (or bucket) holds none of this database's objects: every one there would look orphaned.
    const elsewhere = await runServerCommand(['orphans', '--purge'], { ...server.env, S3_PREFIX: 'tenant-b/' });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toBe(`orphans --purge refused: bucket ${server.env.S3_BUCKET} under tenant-b/ holds none of the 3 object(s) the database refers to: it is not this database's store.\n`);

    const wrong = await runServerCommand(['orphans', '--delete'], server.env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.split('\n')[0]).toBe('error: unknown option --delete for orphans');
    expect(wrong.stderr).toContain('orphans --purge');
  });

  it('finds the objects a day old that no row and no pending upload names, under the prefix, and moves and purges them', async () => {
    const store = await openBlobStore(server.config);
    const disk = new StoredObjects(server.config, new Logger('silent'), store);
    const clock = new TestClock();
    try {
      expect(await findOrphans(server.sql, disk, clock)).toEqual({ inPlace: [], moved: [], complete: true, referenced: { total: 3, found: 3 } });

      clock.advance(DAY_AND_MINUTE_SECONDS);
      const found = await findOrphans(server.sql, disk, clock);
      const expected = [strayFile, strayImage, ...manyStrays].sort();
      expect(found.inPlace.map((orphan) => orphan.key).sort()).toEqual(expected);
      expect(found.inPlace.find((orphan) => orphan.key === strayFile)?.size).toBe(1234);
      expect(found.moved).toEqual([]);
      // The start-up warning's count lists a bounded number of objects, and says when it stopped there.
      const bounded = await findOrphans(server.sql, disk, clock, { limit: 2 });
      expect(bounded.complete).toBe(false);
      expect(bounded.inPlace.length).toBeLessThanOrEqual(2);

      await disk.moveOrphans(found.inPlace, found.moved);
      const after = await findOrphans(server.sql, disk, clock);
      expect(after.inPlace).toEqual([]);
      expect(after.moved.map((orphan) => orphan.key).sort()).toEqual(expected.map((key) => `orphans/${key}`).sort());
      expect(await server.stored.exists(strayFile)).toBe(false);

      await disk.purgeOrphans([...after.inPlace, ...after.moved]);
      expect(await findOrphans(server.sql, disk, clock)).toEqual({ inPlace: [], moved: [], complete: true, referenced: { total: 3, found: 3 } });
      for (const key of [pendingKey, ...recorded]) expect(await server.stored.exists(key)).toBe(true);
      const download = await client(server.url).request('GET', `/api/files/${recorded[0]!.slice('files/'.length, -'.wav'.length)}/download`, { token: owner.token });
      expect(download.status).toBe(200);
    } finally {
      store.close();
    }
  }, 120_000);
});
