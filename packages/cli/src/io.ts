// What band takes from the machine it runs on: its streams, environment, working directory, clock, browser
// and keychain. One Io is made in band.cts (systemIo) and handed to every command group, so no command reads
// `process` itself and tests run commands in-process with their own streams, environment and keychain.
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { type Keychain, openSystemKeychain } from './keychain.js';

export type OutStream = Writable & { isTTY?: boolean; columns?: number };

export type InStream = Readable & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };

export interface Io {
  stdout: OutStream;
  stderr: OutStream;
  stdin: InStream;
  env: Readonly<Record<string, string | undefined>>;
  /** Relative paths on the command line are relative to this. */
  cwd: string;
  homeDir: string;
  /** Milliseconds since the epoch. */
  now(): number;
  /** Shows `url` in the user's browser when there is one; does nothing otherwise. */
  openBrowser(url: string): void;
  /** The OS keychain's client; rejects when it cannot load. Its calls reject when the keychain does not answer in time. */
  loadKeychain(): Promise<Keychain>;
}

/** The Io of the band process. */
export function systemIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Made when first read: Node builds process.stdin (a socket, a TTY or a file stream) on first use, some
    // milliseconds that a command reading no input (`band project list`) need not pay.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    cwd: process.cwd(),
    homeDir: os.homedir(),
    now: () => Date.now(),
    openBrowser: (url) => openSystemBrowser(url, process.env),
    loadKeychain: openSystemKeychain,
  };
}

export function isCI(env: Io['env']): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

function openSystemBrowser(url: string, env: Io['env']): void {
  if (isCI(env)) return;
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  if (process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return;
  const child = spawn(command, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => undefined);
  child.unref();
}
