// Analyses one file with the built engine (dist/analysis/index.js) and prints its own figures as JSON: wall
// and CPU time of the analysis, and the peak RSS growth during it (VmHWM after, minus VmRSS before, with
// the high-water mark reset just before).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { analyzeAudio } = await import(path.resolve(here, '../dist/analysis/index.js'));
const [file, extension] = process.argv.slice(2);

const memory = async (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(await readFile('/proc/self/status', 'utf8'))[1]) * 1024;
globalThis.gc?.();
const before = await memory('VmRSS');
await writeFile('/proc/self/clear_refs', '5');
const cpu = process.cpuUsage();
const started = performance.now();
const result = await analyzeAudio(file, extension);
const wallMs = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
const peak = await memory('VmHWM');
if (result.status !== 'done') throw new Error(`analysis ${result.status}: ${result.reason ?? ''}`);
console.log(JSON.stringify({ wallMs, cpuMs: (user + system) / 1000, rssGrowthBytes: peak - before, audio: result.audio }));
