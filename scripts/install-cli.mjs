// `pnpm install-cli`: builds `band`, packs it (the bundle carries its dependencies; @napi-rs/keyring, the
// keychain module, is installed beside it with the prebuilt binary for this platform, from npm) and installs
// the tarball with `npm install -g`, which puts `band` in npm's global bin directory (`npm prefix -g`/bin).
// npm's own settings apply (`npm_config_prefix`, …). It ends by saying where band will keep logins.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
// pnpm hands its scripts its own settings as npm_config_* variables, which npm does not know and warns about,
// line after line; npm gets only the ones a user sets for npm itself.
const NPM_SETTINGS = new Set(['npm_config_prefix', 'npm_config_registry', 'npm_config_cache', 'npm_config_userconfig', 'npm_config_globalconfig', 'npm_config_nodedir']);
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name) || NPM_SETTINGS.has(name.toLowerCase())));
// Each step's output is kept back and shown only when the step fails: success is one line per step.
const run = (what, command, args, { cwd = root, env = process.env } = {}) => {
  process.stdout.write(`${what}…\n`);
  try {
    return execFileSync(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}${what} failed (${command} ${args.join(' ')})\n`);
    process.exit(1);
  }
};

// JavaScript only: band bundles the SDK's code and never reads its type declarations (most of a build's time).
run('building band', 'pnpm', ['--filter', '@bandcollab/cli...', 'exec', 'tsup', '--no-dts']);
const destination = mkdtempSync(path.join(os.tmpdir(), 'band-pack-'));
try {
  run('packing it', 'pnpm', ['pack', '--pack-destination', destination], { cwd: path.join(root, 'packages/cli') });
  const tarball = path.join(destination, readdirSync(destination).find((name) => name.endsWith('.tgz')));
  run('installing it with npm install --global', 'npm', ['install', '--global', '--no-fund', '--no-audit', '--loglevel=error', tarball], { env: npmEnv });
} finally {
  rmSync(destination, { recursive: true, force: true });
}
const bin = path.join(execFileSync('npm', ['prefix', '--global'], { encoding: 'utf8', env: npmEnv }).trim(), 'bin');
process.stdout.write(`installed band in ${bin}${(process.env.PATH ?? '').split(path.delimiter).includes(bin) ? '' : ` (not on your PATH: add ${bin} to it)`}\n`);
// The keychain module loads here or band never uses a keychain on this machine: say which, once.
const installed = path.join(execFileSync('npm', ['root', '--global'], { encoding: 'utf8', env: npmEnv }).trim(), '@bandcollab/cli');
try {
  execFileSync(process.execPath, ['-e', "require('@napi-rs/keyring')"], { cwd: installed, stdio: 'ignore' });
  process.stdout.write('logins: in the OS keychain (@napi-rs/keyring); where none answers, in 0600 files under ~/.config/band\n');
} catch {
  process.stdout.write('logins: in 0600 files under ~/.config/band (@napi-rs/keyring has no binary for this platform)\n');
}
