import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { BandClient } from '@bandcollab/sdk';
import { recordingDispatcher } from '../../../sdk/test/support.js';
import { bandFactory, type Factory } from '../../src/factory.js';
import type { Io } from '../../src/io.js';
import { runBand as runBandInProcess } from '../../src/main.js';

/** The built binary, for the end-to-end tests that run what users run. */
export const BAND = fileURLToPath(new URL('../../dist/band.cjs', import.meta.url));

export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** A run in this process: stdout also as written, for binary output (`band cut download -o -`). */
export interface InProcessResult extends RunResult {
  stdoutBytes: Buffer;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
  /** In-process only: the clock (default: the real one). */
  now?: () => number;
  /** In-process only: the browser (default: none, so nothing opens). */
  openBrowser?: (url: string) => void;
  /** In-process only: how the commands' SDK clients are made (default: band's own, the SDK as it is). */
  newClient?: Factory['newClient'];
}

/** A user at a machine: their own temporary HOME, no OS keychain (no D-Bus), no terminal. */
export interface CliUser {
  home: string;
  env: Record<string, string>;
  /** Runs band in this process, on streams, environment and working directory of its own. */
  band(args: string[], options?: RunOptions): Promise<InProcessResult>;
  /** Runs the built binary: for the end-to-end tests. */
  bandProcess(args: string[], options?: RunOptions): Promise<RunResult>;
  cleanup(): Promise<void>;
}

export async function cliUser(apiUrl: string, extraEnv: Record<string, string> = {}): Promise<CliUser> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'band-home-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    BAND_API_URL: apiUrl,
    ...extraEnv,
  };
  return {
    home,
    env,
    band: (args, options = {}) => runInProcess(args, { ...options, env: { ...env, ...options.env } }),
    bandProcess: (args, options = {}) => runBand(args, { ...options, env: { ...env, ...options.env } }),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
}

/** Runs the built binary with exactly `env` (nothing inherited), stdin from `input` (else closed). */
export function runBand(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env = Object.fromEntries(Object.entries(options.env ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BAND, ...args], { env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Runs band in-process with exactly `env`, stdin from `input` (else empty), no terminal, no keychain and no
 * browser, as runBand runs the binary: the same command code, without starting a process.
 */
export async function runInProcess(args: string[], options: RunOptions = {}): Promise<InProcessResult> {
  const env = Object.fromEntries(Object.entries(options.env ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const stdout = new Capture();
  const stderr = new Capture();
  const io: Io = {
    stdout,
    stderr,
    stdin: Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)]),
    env,
    cwd: options.cwd ?? process.cwd(),
    homeDir: env.HOME ?? os.homedir(),
    now: options.now ?? (() => Date.now()),
    openBrowser: options.openBrowser ?? (() => undefined),
    loadKeychain: () => Promise.reject(new Error('no OS keychain in tests')),
  };
  const exitCode = await runBandInProcess(args, options.newClient ? { io, newClient: options.newClient } : bandFactory(io));
  return { exitCode, stdout: stdout.text(), stdoutBytes: stdout.bytes(), stderr: stderr.text() };
}

/**
 * SDK clients for band's factory seam (`RunOptions.newClient`) that send through a dispatcher recording the
 * method and path of every request, in order: what a command sent, seen without a process or a proxy.
 */
export function recordingClients(): { newClient: Factory['newClient']; requests: string[]; close(): Promise<void> } {
  const { dispatcher, requests } = recordingDispatcher();
  return { newClient: (options) => new BandClient({ ...options, dispatcher }), requests, close: () => dispatcher.close() };
}

/** A stream that keeps what is written to it. */
class Capture extends Writable {
  private readonly chunks: Buffer[] = [];

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(Buffer.from(chunk));
    done();
  }

  text(): string {
    return this.bytes().toString('utf8');
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** The file holding a user's login on a server when there is no keychain: one per profile and server origin. */
export function credentialFile(user: CliUser, apiUrl: string, profile = 'default'): string {
  const url = new URL(apiUrl);
  // band keeps a loopback server's login under localhost.
  if (url.hostname === '127.0.0.1') url.hostname = 'localhost';
  return path.join(user.home, '.config/band/credentials', `${profile}@${encodeURIComponent(url.origin)}.json`);
}

/** Registers through the CLI itself and leaves the user logged in. */
export async function registerWithCli(user: CliUser, email: string, password = 'correct horse battery', name = email.split('@')[0]!): Promise<RunResult> {
  const result = await user.band(['auth', 'register', '--email', email, '--name', name, '--password-stdin'], { input: `${password}\n` });
  if (result.exitCode !== 0) throw new Error(`band auth register failed (${result.exitCode}): ${result.stderr}`);
  return result;
}

/** Matches any ANSI escape sequence (colours, cursor movement, spinner redraws). */
export const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/;

/** A small valid WAV file (RIFF…WAVE header, then `size` bytes of noise) with distinct content per seed. */
export function wavBytes(seed: number, size = 4096): Buffer {
  const body = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) body[i] = (seed * 31 + i * 7) & 0xff;
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(size + 4, 4);
  header.write('WAVE', 8, 'ascii');
  return Buffer.concat([header, body]);
}

/** GET with a bearer token, parsed as JSON. */
export async function apiGet<T>(baseUrl: string, path: string, token: string): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
  return (await response.json()) as T;
}
