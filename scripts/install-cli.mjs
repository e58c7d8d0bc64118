// `pnpm install-cli`: builds `band`, packs it (the bundle carries its dependencies; keytar, the optional
// keychain module, is installed beside it) and installs the tarball with `npm install -g`, which puts `band`
// in npm's global bin directory (`npm prefix -g`/bin). npm's own settings apply (`npm_config_prefix`, …).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const run = (command, args, cwd = root) => execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });

run('pnpm', ['--filter', '@bandcollab/cli...', 'build']);
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
