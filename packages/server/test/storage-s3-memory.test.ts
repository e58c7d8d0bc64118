import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { type ServerProcess, spawnServer } from './support/process.js';
import { s3TestEnv } from './support/s3.js';
import { createMigratedTestDatabase } from './support/server.js';

// The "500 MiB upload with flat memory" (§15: never a whole file in memory), on the built server in a
// process of its own, whose resident memory is read from /proc while 500 MiB go through it to S3 and back.
const MiB = 1024 * 1024;
const PART_MIB = 8;
const SIZE = 500 * MiB;
/**
 * How much the server's resident memory may grow during the transfer, whatever its length: the driver's two
 * part buffers (one uploading while the other fills), plus 128 MiB for the chunks the sockets read, each a new
 * buffer outside the JS heap that only a full collection frees: V8 runs one every 0.2–0.5 s here, later on a
 * busy machine, so tens of MiB of them are resident at any time (measured: 35–64 MiB in this test, up to
 * 112 MiB in the benchmark's harness at load average 10+). A write that kept its parts, or a download that
 * buffered the object, passes 500 MiB here. It cannot tell the driver's former copy per part from the two
 * buffers: that difference (about one part) is within the garbage's swing (docs/benchmarks.md, issue 27).
 */
const GROWTH_BOUND = 2 * PART_MIB * MiB + 128 * MiB;
const ZIP_SIGNATURE = Buffer.from('PK\x03\x04\x14\x00', 'latin1');

let server: ServerProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-s3-memory-'));
  server = await spawnServer({
    DATA_DIR: dataDir,
    DATABASE_URL: await createMigratedTestDatabase(),
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
    ...(await s3TestEnv()),
    S3_PART_SIZE_MB: String(PART_MIB),
  });
});
afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await rm(dataDir, { recursive: true, force: true });
});

/** `size` bytes made as they are read, 1 MiB at a time (never the whole file in the test either): a ZIP's leading bytes, then a counter pattern. */
function generated(size: number): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < size; at += MiB) {
        const chunk = Buffer.alloc(Math.min(MiB, size - at), at / MiB);
        chunk.writeUInt32BE(at / MiB, chunk.length - 4);
        if (at === 0) ZIP_SIGNATURE.copy(chunk);
        yield chunk;
      }
    })(),
  );
}

async function sha256Of(source: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of source) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const status = (pid: number) => readFile(`/proc/${pid}/status`, 'utf8');
const kib = (text: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)![1]) * 1024;

/** How far the process's resident memory rose above its level at the start while `work` ran: its peak (VmHWM, reset first), less VmRSS then. */
async function growthDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  // Writing 5 to clear_refs resets VmHWM to the current VmRSS (proc(5)).
  await writeFile(`/proc/${pid}/clear_refs`, '5');
  const before = kib(await status(pid), 'VmRSS');
  const result = await work();
  return { result, growth: kib(await status(pid), 'VmHWM') - before };
}

function uploadStream(token: string, cutId: string, size: number): Promise<{ status: number; body: string }> {
  const boundary = '----bandcollab-memory-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="cutId"\r\n\r\n${cutId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stems.zip"\r\nContent-Type: application/zip\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/api/files/upload`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + size + tail.length },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.write(head);
    const source = generated(size);
    source.pipe(req, { end: false });
    source.on('end', () => req.end(tail));
  });
}

function downloadHash(token: string, fileId: string): Promise<{ status: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    request(`${server.url}/api/files/${fileId}/download`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      sha256Of(res).then((sha256) => resolve({ status: res.statusCode!, sha256 }), reject);
    })
      .on('error', reject)
      .end();
  });
}

it("uploads 500 MiB through the server to S3 and downloads it back, byte-identical, its memory growing by two parts and the read chunks awaiting a collection at most", { timeout: 300_000 }, async () => {
  const owner = await userWithCut(client(server.url));
  // A first upload over several parts loads every module and opens the store's connections: not counted.
  const warmUp = await uploadStream(owner.token, owner.cutId, 3 * PART_MIB * MiB);
  expect(warmUp.status).toBe(201);

  const expected = await sha256Of(generated(SIZE));
  const uploaded = await growthDuring(server.child.pid!, () => uploadStream(owner.token, owner.cutId, SIZE));
  expect(uploaded.result.status, uploaded.result.body).toBe(201);
  const file = JSON.parse(uploaded.result.body) as { id: string; size: number; sha256: string };
  expect(file).toMatchObject({ size: SIZE, sha256: expected });

  const downloaded = await growthDuring(server.child.pid!, () => downloadHash(owner.token, file.id));
  expect(downloaded.result).toEqual({ status: 200, sha256: expected });

  console.log(`RSS growth: upload ${(uploaded.growth / MiB).toFixed(1)} MiB, download ${(downloaded.growth / MiB).toFixed(1)} MiB (bound ${GROWTH_BOUND / MiB} MiB)`);
  expect(uploaded.growth).toBeLessThan(GROWTH_BOUND);
  expect(downloaded.growth).toBeLessThan(GROWTH_BOUND);
  // The bucket is fauxqs's memory: the object goes.
  expect((await client(server.url).request('DELETE', `/api/files/${file.id}`, { token: owner.token })).status).toBe(200);
});
