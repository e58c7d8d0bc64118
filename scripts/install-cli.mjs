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
const run = (command, args, cwd = root) => execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });

// JavaScript only: band bundles the SDK's code and never reads its type declarations (most of a build's time).
run('pnpm', ['--filter', '@bandcollab/cli...', 'exec', 'tsup', '--no-dts']);
const destination = mkdtempSync(path.join(os.tmpdir(), 'band-pack-'));
try {
  run('pnpm', ['pack', '--pack-destination', destination], path.join(root, 'packages/cli'));
  const tarball = path.join(destination, readdirSync(destination).find((name) => name.endsWith('.tgz')));
  run('npm', ['install', '--global', '--no-fund', '--no-audit', tarball]);
} finally {
  rmSync(destination, { recursive: true, force: true });
}
const bin = path.join(execFileSync('npm', ['prefix', '--global'], { encoding: 'utf8' }).trim(), 'bin');
process.stdout.write(`installed band in ${bin}${(process.env.PATH ?? '').split(path.delimiter).includes(bin) ? '' : ` (not on your PATH: add ${bin} to it)`}\n`);
// The keychain module loads here or band never uses a keychain on this machine: say which, once.
const installed = path.join(execFileSync('npm', ['root', '--global'], { encoding: 'utf8' }).trim(), '@bandcollab/cli');
try {
  execFileSync(process.execPath, ['-e', "require('@napi-rs/keyring')"], { cwd: installed, stdio: 'ignore' });
  process.stdout.write('logins: in the OS keychain (@napi-rs/keyring); where none answers, in 0600 files under ~/.config/band\n');
} catch {
  process.stdout.write('logins: in 0600 files under ~/.config/band (@napi-rs/keyring has no binary for this platform)\n');
}
