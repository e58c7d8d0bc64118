// Helpers every server benchmark shares: child processes that print "listening on <url>", JSON API calls,
// /proc figures and the one-JSON-line-per-figure report; the transfer benchmarks' files, uploads and measures.
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { readFile, truncate, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import path from 'node:path';

/** Starts `node script ...args` and resolves once it prints its `listening on` line. */
export async function start(script, args = [], env = {}) {
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.once('exit', () => reject(new Error(`${script} exited before listening:\n${output}`)));
  });
  return { url, process: child };
}

/** A JSON request to the API; throws on an error status. */
export async function call(baseUrl, method, pathname, token, json) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  if (json) headers['content-type'] = 'application/json';
  const response = await fetch(`${baseUrl}${pathname}`, { method, headers, body: json ? JSON.stringify(json) : undefined });
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A memory field of /proc/PID/status (VmRSS, VmHWM, ...), in bytes. */
export async function memory(pid, field) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)[1]) * 1024;
}

export function report(name, figures) {
  console.log(JSON.stringify({ bench: name, ...figures }));
}

export function round(value) {
  return Math.round(value * 100) / 100;
}

const MiB = 1024 * 1024;

/** A sparse file that starts like a ZIP: reading it costs no disk, so the servers are what is measured. */
export async function zipFile(dir, name, sizeMiB) {
  const file = path.join(dir, name);
  await writeFile(file, Buffer.from('PK\x03\x04', 'latin1'));
  await truncate(file, sizeMiB * MiB);
  return { path: file, size: sizeMiB * MiB };
}

export function multipart(cutId, fileName, contentType = 'application/zip') {
  const boundary = '----bandcollab-bench-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="cutId"\r\n\r\n${cutId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\n` +
      `Content-Type: ${contentType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, head, tail, overhead: head.length + tail.length };
}

/** Streams head + file + tail as one request with a Content-Length; resolves with the response. */
export function send(url, token, body, file) {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': body.contentType,
        'content-length': body.overhead + file.size,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    req.write(body.head);
    const stream = createReadStream(file.path, { highWaterMark: MiB });
    stream.pipe(req, { end: false });
    stream.on('end', () => req.end(body.tail));
  });
}

/** GETs a URL and counts the bytes without keeping them. */
export function fetchAll(url, headers) {
  return new Promise((resolve, reject) => {
    request(url, { agent: false, headers }, (res) => {
      let size = 0;
      res.on('data', (chunk) => (size += chunk.length));
      res.on('end', () => (res.statusCode === 200 ? resolve({ size }) : reject(new Error(`download: ${res.statusCode}`))));
    })
      .on('error', reject)
      .end();
  });
}

/**
 * Times `work` and the server's peak RSS growth during it. Dirty pages of earlier writes are flushed first,
 * so no transfer pays for another's writeback.
 */
export async function measure(server, work) {
  execFileSync('sync');
  const rssBefore = await memory(server.process.pid, 'VmRSS');
  await writeFile(`/proc/${server.process.pid}/clear_refs`, '5');
  const cpuBefore = await cpuSeconds(server.process.pid);
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  const cpu = (await cpuSeconds(server.process.pid)) - cpuBefore;
  const peak = await memory(server.process.pid, 'VmHWM');
  return { result, seconds, cpu, growthMiB: round((peak - rssBefore) / MiB) };
}

/** User + system CPU time of a process (fields 14 and 15 of /proc/PID/stat, in clock ticks of 10 ms). */
export async function cpuSeconds(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function seed(baseUrl) {
  const auth = await call(baseUrl, 'POST', '/api/auth/register', null, { email: `bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
  const token = auth.accessToken;
  const project = await call(baseUrl, 'POST', '/api/projects', token, { name: 'Bench' });
  const vibe = await call(baseUrl, 'POST', `/api/projects/${project.id}/vibes`, token, { name: 'Bench' });
  const cut = await call(baseUrl, 'POST', `/api/vibes/${vibe.id}/cuts`, token, { name: 'Bench' });
  return { token, cutId: cut.id };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** `connections` keep-alive connections each sending GETs back to back for `seconds`: throughput, p50/p99 and errors. */
export async function load(url, headers, seconds, connections) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const connection = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      const ok = await get(url, headers, agent);
      latencies.push(performance.now() - sent);
      if (!ok) errors += 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, connection));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))];
  return { requests: latencies.length, requestsPerSecond: latencies.length / elapsed, p50: percentile(50), p99: percentile(99), errors };
}

/** One GET whose body is read and dropped; resolves true for a 200. */
function get(url, headers, agent) {
  return new Promise((resolve) => {
    request(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    })
      .on('error', () => resolve(false))
      .end();
  });
}
