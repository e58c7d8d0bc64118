// S3 benchmark of the built server (run `pnpm build` first; the root `pnpm bench` does), with STORAGE=s3 on
// fauxqs (the tests' S3 emulator, in a process of its own: s3-fauxqs-server.mjs), side by side in one run
// with the same bytes put and got directly with the AWS SDK against the same store:
//  1. a 500 MiB upload (multipart/form-data through the server) against the SDK's multipart upload of the
//     same file in parts of the same size, one part in flight while the next is read (the driver's way);
//  2. the download of that object through the server against the SDK's GetObject, and through a bare
//     node:http server piping GetObject's body to its response (s3-bare-proxy-server.mjs), and through one
//     piping a pooled undici GET of a presigned URL (s3-bare-undici-proxy-server.mjs), the driver's way: the
//     floor of any server that sends the bytes itself (targets: at least 0.9x the undici proxy, 0.6x the SDK
//     direct);
//  3. the same download from a second server with S3_PRESIGNED_DOWNLOADS=true: its 302, followed by the
//     client to the presigned GET, against the SDK's GetObject;
//  4. the server's peak RSS growth during each (flat: the bytes stream through in parts);
//  5. a tus upload (one PATCH) on S3 against the multipart upload on S3.
// Throughput is the median of alternating rounds, in MB/s (10^6 bytes per second). Wall-clock rates swing with
// whatever else the machine runs (three processes share its cores here), so CPU time per byte is reported
// beside them: the server's own, against the benchmark process's while it calls the SDK directly, and for
// downloads each process's (the store, the server, the client), whose sum bounds the rate on two cores.
import { once } from 'node:events';
import { chmod, mkdtemp, open, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { call, cpuSeconds, fetchAll, measure, median, multipart, report, round, seed, send, start, zipFile } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const MiB = 1024 * 1024;
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PART_MIB = 8;
const BUCKET = 'bench';
const CREDENTIALS = { accessKeyId: 'bench', secretAccessKey: 'bench-secret' };
const TARGETS = { throughputRatio: 0.8, growthMiB: 64, downloadOverUndiciProxy: 0.9, downloadOverSdk: 0.6 };
const TUS = { 'tus-resumable': '1.0.0' };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-s3-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const processes = [];
let s3;
try {
  const store = await start(path.join(here, 's3-fauxqs-server.mjs'));
  processes.push(store);
  const serverEnv = (dataDir) => ({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: path.join(work, dataDir),
    LOG_LEVEL: 'error',
    STORAGE: 's3',
    S3_BUCKET: BUCKET,
    S3_ENDPOINT: store.url,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    S3_PART_SIZE_MB: String(PART_MIB),
  });
  const server = await start(serverMain, [], serverEnv('data'));
  processes.push(server);
  const presigning = await start(serverMain, [], { ...serverEnv('data-presigned'), S3_PRESIGNED_DOWNLOADS: 'true' });
  processes.push(presigning);
  const bareProxy = await start(path.join(here, 's3-bare-proxy-server.mjs'), [store.url, BUCKET]);
  processes.push(bareProxy);
  const undiciProxy = await start(path.join(here, 's3-bare-undici-proxy-server.mjs'), [store.url, BUCKET]);
  processes.push(undiciProxy);
  // The server's own settings: no request checksums (STACK.md), the SDK's standard retries.
  s3 = new S3Client({
    endpoint: store.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const { token, cutId } = await seed(server.url);
  const big = await zipFile(work, 'stems.zip', UPLOAD_MIB);
  const body = multipart(cutId, 'stems.zip');
  const auth = { authorization: `Bearer ${token}` };
  const timed = async (work) => {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const result = await work();
    const { user, system } = process.cpuUsage(cpuBefore);
    return { result, seconds: (performance.now() - started) / 1000, cpu: (user + system) / 1e6 };
  };
  /** A download's time with the CPU seconds of each process on its way: the store, the server (if any), the client (this one). */
  const download = async (sender, work) => {
    const storeBefore = await cpuSeconds(store.process.pid);
    const measured = sender ? await measure(sender, () => timed(work)) : { result: await timed(work), cpu: 0 };
    const { result, seconds, cpu } = measured.result;
    return { result, seconds, cpu: sender ? measured.cpu : cpu, serverCpu: measured.cpu, clientCpu: cpu, storeCpu: (await cpuSeconds(store.process.pid)) - storeBefore, growthMiB: measured.growthMiB };
  };
  // The presigning server's copy of the file, downloaded every round: its own database knows no other.
  const presigned = await seed(presigning.url);
  const presignedUpload = await send(`${presigning.url}/api/files/upload`, presigned.token, multipart(presigned.cutId, 'stems.zip'), big);
  if (presignedUpload.status !== 201) throw new Error(`upload failed: ${presignedUpload.status} ${presignedUpload.body}`);
  const presignedFile = `${presigning.url}/api/files/${JSON.parse(presignedUpload.body).id}/download`;

  const rounds = { ours: [], sdk: [], tus: [], oursDown: [], sdkDown: [], bareDown: [], undiciDown: [], presignedDown: [] };
  for (let i = 0; i < ROUNDS; i += 1) {
    const uploads = [
      ['ours', () => measure(server, () => send(`${server.url}/api/files/upload`, token, body, big))],
      ['sdk', () => timed(() => sdkPut(`direct/${i}`, big))],
      ['tus', () => measure(server, () => tusUpload(server.url, token, cutId, big))],
    ];
    for (const [name, upload] of [...uploads.slice(i % 3), ...uploads.slice(0, i % 3)]) rounds[name].push(await upload());
    const ours = rounds.ours.at(-1).result;
    if (ours.status !== 201) throw new Error(`upload failed: ${ours.status} ${ours.body}`);
    const fileId = JSON.parse(ours.body).id;
    const downloads = [
      ['oursDown', () => download(server, () => fetchAll(`${server.url}/api/files/${fileId}/download`, auth))],
      ['sdkDown', () => download(null, () => sdkGet(`direct/${i}`))],
      ['bareDown', () => download(bareProxy, () => fetchAll(`${bareProxy.url}/files/${fileId}.zip`))],
      ['undiciDown', () => download(undiciProxy, () => fetchAll(`${undiciProxy.url}/files/${fileId}.zip`))],
      ['presignedDown', () => download(presigning, () => fetchRedirected(presignedFile, { authorization: `Bearer ${presigned.token}` }))],
    ];
    for (const [name, run] of [...downloads.slice(i % downloads.length), ...downloads.slice(0, i % downloads.length)]) {
      const result = await run();
      if (result.result.size !== big.size) throw new Error(`${name}: ${result.result.size} bytes of ${big.size}`);
      rounds[name].push(result);
    }
    for (const id of [fileId, rounds.tus.at(-1).result]) await call(server.url, 'DELETE', `/api/files/${id}`, token);
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `direct/${i}` }));
  }

  const rate = (runs, size) => median(runs.map((run) => size / run.seconds / 1e6));
  const cpuRate = (runs, size) => median(runs.map((run) => size / run.cpu / 1e6));
  /** MB per CPU-second of one process of a download's way, medians; null where it spent no measurable CPU. */
  const processRate = (runs, field) => {
    const cpu = median(runs.map((run) => run[field]));
    return cpu > 0 ? round(big.size / cpu / 1e6) : null;
  };
  const growth = (runs) => Math.max(...runs.map((run) => run.growthMiB));
  const uploadSize = big.size + body.overhead;
  const uploadRatio = rate(rounds.ours, uploadSize) / rate(rounds.sdk, big.size);
  const downloadRatio = rate(rounds.oursDown, big.size) / rate(rounds.sdkDown, big.size);
  const undiciProxyRatio = rate(rounds.oursDown, big.size) / rate(rounds.undiciDown, big.size);
  const tusRatio = rate(rounds.tus, big.size) / rate(rounds.ours, uploadSize);
  report('s3 upload', {
    sizeMiB: UPLOAD_MIB,
    rounds: ROUNDS,
    bandcollabMBps: round(rate(rounds.ours, uploadSize)),
    awsSdkMBps: round(rate(rounds.sdk, big.size)),
    ratio: round(uploadRatio),
    bandcollabMBperCpuSecond: round(cpuRate(rounds.ours, uploadSize)),
    awsSdkMBperCpuSecond: round(cpuRate(rounds.sdk, big.size)),
    bandcollabRssGrowthMiB: growth(rounds.ours),
    target: `ratio >= ${TARGETS.throughputRatio}, growth < ${TARGETS.growthMiB} MiB`,
    met: uploadRatio >= TARGETS.throughputRatio && growth(rounds.ours) < TARGETS.growthMiB,
  });
  report('s3 download', {
    sizeMiB: UPLOAD_MIB,
    rounds: ROUNDS,
    bandcollabMBps: round(rate(rounds.oursDown, big.size)),
    awsSdkMBps: round(rate(rounds.sdkDown, big.size)),
    ratio: round(downloadRatio),
    bandcollabMBperCpuSecond: round(cpuRate(rounds.oursDown, big.size)),
    awsSdkMBperCpuSecond: round(cpuRate(rounds.sdkDown, big.size)),
    bandcollabRssGrowthMiB: growth(rounds.oursDown),
    // The floor of any server that sends the bytes itself, in the same run.
    bareProxyMBps: round(rate(rounds.bareDown, big.size)),
    bareProxyRatio: round(rate(rounds.bareDown, big.size) / rate(rounds.sdkDown, big.size)),
    bareProxyMBperCpuSecond: round(cpuRate(rounds.bareDown, big.size)),
    // The driver's way, bare: a pooled undici GET of a presigned URL piped to the response.
    undiciProxyMBps: round(rate(rounds.undiciDown, big.size)),
    undiciProxyRatio: round(rate(rounds.undiciDown, big.size) / rate(rounds.sdkDown, big.size)),
    ratioOverUndiciProxy: round(undiciProxyRatio),
    undiciProxyMBperCpuSecond: round(cpuRate(rounds.undiciDown, big.size)),
    // MB per CPU-second of each process on the way: fauxqs, the server, the client (the SDK when direct).
    processes: {
      bandcollab: { store: processRate(rounds.oursDown, 'storeCpu'), server: processRate(rounds.oursDown, 'serverCpu'), client: processRate(rounds.oursDown, 'clientCpu') },
      bareProxy: { store: processRate(rounds.bareDown, 'storeCpu'), server: processRate(rounds.bareDown, 'serverCpu'), client: processRate(rounds.bareDown, 'clientCpu') },
      undiciProxy: { store: processRate(rounds.undiciDown, 'storeCpu'), server: processRate(rounds.undiciDown, 'serverCpu'), client: processRate(rounds.undiciDown, 'clientCpu') },
      awsSdk: { store: processRate(rounds.sdkDown, 'storeCpu'), client: processRate(rounds.sdkDown, 'clientCpu') },
    },
    target: `ratio >= ${TARGETS.downloadOverSdk}, ratioOverUndiciProxy >= ${TARGETS.downloadOverUndiciProxy}, growth < ${TARGETS.growthMiB} MiB`,
    met: downloadRatio >= TARGETS.downloadOverSdk && undiciProxyRatio >= TARGETS.downloadOverUndiciProxy && growth(rounds.oursDown) < TARGETS.growthMiB,
  });
  report('s3 presigned download', {
    sizeMiB: UPLOAD_MIB,
    rounds: ROUNDS,
    presignedMBps: round(rate(rounds.presignedDown, big.size)),
    awsSdkMBps: round(rate(rounds.sdkDown, big.size)),
    ratio: round(rate(rounds.presignedDown, big.size) / rate(rounds.sdkDown, big.size)),
    proxiedMBps: round(rate(rounds.oursDown, big.size)),
    serverCpuSecondsPerDownload: round(median(rounds.presignedDown.map((run) => run.serverCpu))),
    serverRssGrowthMiB: growth(rounds.presignedDown),
  });
  report('s3 tus upload', {
    sizeMiB: UPLOAD_MIB,
    rounds: ROUNDS,
    tusMBps: round(rate(rounds.tus, big.size)),
    multipartMBps: round(rate(rounds.ours, uploadSize)),
    ratioOverMultipart: round(tusRatio),
    tusRssGrowthMiB: growth(rounds.tus),
  });
} finally {
  s3?.destroy();
  for (const child of processes.reverse()) {
    child.process.kill('SIGTERM');
    await once(child.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}

/** The SDK's multipart upload of `file` in parts of PART_MIB, one part in flight while the next is read. */
async function sdkPut(key, file) {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
  const handle = await open(file.path);
  const parts = [];
  let inFlight = Promise.resolve();
  try {
    for (let offset = 0, partNumber = 1; offset < file.size; offset += PART_MIB * MiB, partNumber += 1) {
      const bytes = Buffer.allocUnsafe(Math.min(PART_MIB * MiB, file.size - offset));
      await handle.read(bytes, 0, bytes.length, offset);
      await inFlight;
      const number = partNumber;
      inFlight = s3
        .send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: number, Body: bytes, ContentLength: bytes.length }))
        .then(({ ETag }) => parts.push({ PartNumber: number, ETag }));
    }
    await inFlight;
  } finally {
    await handle.close();
  }
  await s3.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
}

/** The SDK's GetObject, the bytes counted and dropped. */
async function sdkGet(key) {
  const { Body } = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  let size = 0;
  for await (const chunk of Body) size += chunk.length;
  return { size };
}

/** GETs a URL answered 302 and follows the redirect without the credentials, as a browser does across origins; counts the bytes. */
function fetchRedirected(url, headers) {
  return new Promise((resolve, reject) => {
    request(url, { agent: false, headers }, (res) => {
      res.resume();
      if (res.statusCode !== 302) return reject(new Error(`download: ${res.statusCode}, not 302`));
      fetchAll(res.headers.location).then(resolve, reject);
    })
      .on('error', reject)
      .end();
  });
}

/** A tus upload of the whole file in one PATCH; resolves with the file's id. */
async function tusUpload(baseUrl, token, cutId, file) {
  const created = await fetch(`${baseUrl}/api/uploads`, {
    method: 'POST',
    headers: { ...TUS, authorization: `Bearer ${token}`, 'upload-length': String(file.size), 'upload-metadata': `cutId ${btoa(cutId)},filename ${btoa('stems.zip')}` },
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${created.headers.get('location')}`, {
      method: 'PATCH',
      agent: false,
      headers: { ...TUS, authorization: `Bearer ${token}`, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0', 'content-length': String(file.size) },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 204 && res.headers['band-file-id'] ? resolve(res.headers['band-file-id']) : reject(new Error(`PATCH: ${res.statusCode}`))));
    });
    req.on('error', reject);
    createReadStream(file.path, { highWaterMark: MiB }).pipe(req);
  });
}
