// The baseline of the upload benchmark: the same multipart upload with form-data and undici alone.
// Usage: node bare-upload-peak-rss.mjs <baseUrl> <accessToken> <cutId> <file>
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import FormData from 'form-data';
import { request } from 'undici';

const [baseUrl, accessToken, cutId, file] = process.argv.slice(2);
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;

await (await request(`${baseUrl}/api/auth/me`, { headers: { authorization: `Bearer ${accessToken}` } })).body.json();
const idle = peakRss();
writeFileSync('/proc/self/clear_refs', '5');
const started = performance.now();
const form = new FormData();
form.append('cutId', cutId);
form.append('file', createReadStream(file), { filename: path.basename(file), contentType: 'application/zip', knownLength: statSync(file).size });
const response = await request(`${baseUrl}/api/files/upload`, {
  method: 'POST',
  headers: { ...form.getHeaders(), 'content-length': String(form.getLengthSync()), authorization: `Bearer ${accessToken}` },
  body: form,
  headersTimeout: 120_000,
  bodyTimeout: 120_000,
});
const record = await response.body.json();
if (response.statusCode !== 201) throw new Error(`upload failed: ${response.statusCode} ${JSON.stringify(record)}`);
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ idleRss: idle, peakRss: peakRss(), size: record.size, seconds }));
