import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyRepository, type RepoCopy } from '../../server/test/support/repo-copy.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import type { RunResult } from './support/cli.js';

// `pnpm install-cli` as the README gives it, in a copy of the repository with nothing built, installing
// into a temporary npm prefix instead of the machine's global one. The keychain module comes with it, its
// binary prebuilt (nothing compiles); without a D-Bus session here, `band` keeps logins in its file store.
let copy: RepoCopy;
let prefix: string;
let home: string;
let server: TestServer;

beforeAll(async () => {
  copy = await copyRepository();
  prefix = await mkdtemp(path.join(os.tmpdir(), 'band-prefix-'));
  home = await mkdtemp(path.join(os.tmpdir(), 'band-home-'));
  server = await startTestServer();
}, 120_000);
afterAll(async () => {
  await server?.close();
  await copy?.remove();
  for (const dir of [prefix, home]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('pnpm install-cli', () => {
  it('builds band and installs it into npm’s global bin directory, where it runs against a server', async () => {
    const installed = await copy.run('pnpm', ['install-cli'], { env: { npm_config_prefix: prefix } });
    const bin = path.join(prefix, 'bin');
    expect(installed.stdout).toContain(`installed band in ${bin}`);
    expect(installed.stdout).toContain('logins: in the OS keychain (@napi-rs/keyring)');
    expect(installed.stderr).not.toMatch(/gyp|ERR!/);
    // A few lines that say what happened: no npm warnings about pnpm's settings, no build output.
    expect(installed.stderr).not.toMatch(/Unknown env config|npm warn/i);
    const said = installed.stdout.split('\n').filter((line) => line !== '' && !line.startsWith('> '));
    expect(said, installed.stdout).toEqual(['building band…', 'packing it…', 'installing it with npm install --global…', expect.stringMatching(/^installed band in /), expect.stringMatching(/^logins: /)]);

    // Found through PATH, as a shell finds it.
    const env = { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, HOME: home, BAND_API_URL: server.url };
    const band = (args: string[], input = '') => runCommand('band', args, env, input);
    const { version } = JSON.parse(await readFile(path.join(copy.root, 'packages/cli/package.json'), 'utf8')) as { version: string };
    expect(await band(['--version'])).toMatchObject({ exitCode: 0, stdout: `${version}\n` });

    const registered = await band(['auth', 'register', '--email', 'installed@example.com', '--name', 'Installed', '--password-stdin'], 'correct horse battery\n');
    expect(registered.exitCode, registered.stderr).toBe(0);
    expect(await band(['project', 'create', 'First song'])).toMatchObject({ exitCode: 0 });
    const listed = await band(['project', 'list']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('First song');
  }, 600_000);
});

function runCommand(command: string, args: string[], env: Record<string, string>, input: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ exitCode: code, stdout, stderr }));
    child.stdin.end(input);
  });
}
