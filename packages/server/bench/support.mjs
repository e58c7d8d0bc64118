// Helpers every server benchmark shares: child processes that print "listening on <url>", JSON API calls,
// /proc figures and the one-JSON-line-per-figure report.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

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
