// An unchanged new version refused before its body (§14 If-None-Match) on the built server (run `pnpm build`
// first; the root `pnpm bench` does): the bytes the server process reads (/proc/PID/io rchar: sockets and files)
// while a CI job offers the same 400 MiB mix again as the next version, against those it reads while that mix
// is uploaded the first time, in the same run. BENCH_UNCHANGED_MIB changes the size.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { multipart, report, round, seed, send, start, zipFile } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const SIZE_MIB = Number(process.env.BENCH_UNCHANGED_MIB ?? 400);
const MiB = 1024 * 1024;

/** Bytes the process has read so far, from any file or socket. */
const bytesRead = async (pid) => Number(/rchar: (\d+)/.exec(await readFile(`/proc/${pid}/io`, 'utf8'))[1]);

/** Offers `file` as the next version of `versionOf` with If-None-Match: resolves with the answer's status once it arrives. */
function offerVersion(url, token, versionOf, sha256, file) {
  const boundary = '----bandcollab-bench-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="versionOf"\r\n\r\n${versionOf}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stems.zip"\r\nContent-Type: application/zip\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': head.length + file.size + tail.length,
        'if-none-match': `"${sha256}"`,
      },
    });
    const body = createReadStream(file.path, { highWaterMark: MiB });
    req.on('response', (res) => {
      // The answer came: the client stops sending, as a CI job that got "unchanged" does.
      body.destroy();
      res.resume();
      res.on('end', () => {
        req.destroy();
        resolve(res.statusCode);
      });
    });
    req.on('error', (error) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    req.write(head);
    body.pipe(req, { end: false });
    body.on('end', () => req.end(tail));
  });
}

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-unchanged-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
let server;
try {
  server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error', ANALYSIS_CONCURRENCY: '0' });
  const { token, cutId } = await seed(server.url);
  const file = await zipFile(work, 'stems.zip', SIZE_MIB);
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file.path)) hash.update(chunk);
  const sha256 = hash.digest('hex');

  const beforeFirst = await bytesRead(server.process.pid);
  const first = await send(`${server.url}/api/files/upload`, token, multipart(cutId, 'stems.zip'), file);
  if (first.status !== 201) throw new Error(`first upload: ${first.status} ${first.body}`);
  const readFirst = (await bytesRead(server.process.pid)) - beforeFirst;

  const beforeAgain = await bytesRead(server.process.pid);
  const status = await offerVersion(`${server.url}/api/files/upload`, token, JSON.parse(first.body).id, sha256, file);
  if (status !== 412) throw new Error(`the unchanged version was answered ${status}, not 412`);
  const readAgain = (await bytesRead(server.process.pid)) - beforeAgain;

  report(`unchanged version of a ${SIZE_MIB} MiB upload`, {
    bytesReadRefused: readAgain,
    bytesReadFirstUpload: readFirst,
    ratio: round(readAgain / readFirst),
  });
} finally {
  server?.process.kill('SIGTERM');
  if (server) await new Promise((resolve) => server.process.once('exit', resolve));
  await rm(work, { recursive: true, force: true });
}
