// Makes one preview with the built encoder (dist/analysis/preview-encode.js) and prints its own figures as JSON: wall
// and CPU time (every thread of the process, the encoder's own included), and the peak RSS growth during it
// (VmHWM after, minus VmRSS before, with the high-water mark reset just before).
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { analyzeAudio } = await import(path.resolve(here, '../dist/analysis/index.js'));
const { encodePreview } = await import(path.resolve(here, '../dist/analysis/preview-encode.js'));
const [file, extension, out] = process.argv.slice(2);

const analysed = await analyzeAudio(file, extension);
if (analysed.status !== 'done') throw new Error(`analysis ${analysed.status}`);
const memory = async (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(await readFile('/proc/self/status', 'utf8'))[1]) * 1024;
globalThis.gc?.();
const before = await memory('VmRSS');
await writeFile('/proc/self/clear_refs', '5');
const cpu = process.cpuUsage();
const started = performance.now();
const result = await encodePreview(file, extension, out, { expectedDurationMs: analysed.audio.durationMs });
const wallMs = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
const peak = await memory('VmHWM');
await rm(out, { force: true });
if (result.status !== 'done') throw new Error(`preview ${result.status}: ${result.reason ?? ''}`);
console.log(JSON.stringify({ wallMs, cpuMs: (user + system) / 1000, rssGrowthBytes: peak - before, audioMinutes: analysed.audio.durationMs / 60000 }));
process.exit(0);
