// `pnpm start` runs this first: it builds the server (and the SDK it loads the contract from) only when a
// source is newer than the built output, and keeps the build's output out of the server's log lines.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const packages = ['server', 'sdk'].map((name) => path.join(root, 'packages', name));
const sources = packages.flatMap((dir) => [path.join(dir, 'src'), path.join(dir, 'package.json'), path.join(dir, 'tsup.config.ts')]);
const outputs = [path.join(root, 'packages/server/dist/main.js'), path.join(root, 'packages/sdk/dist/index.js'), path.join(root, 'packages/sdk/dist/contract/index.js')];

/** The newest modification time under a file or directory, in ms. */
function newest(file) {
  const stats = statSync(file);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(file).reduce((latest, entry) => Math.max(latest, newest(path.join(file, entry))), stats.mtimeMs);
}

function oldestOutput() {
  try {
    return Math.min(...outputs.map((file) => statSync(file).mtimeMs));
  } catch {
    return -Infinity;
  }
}

if (Math.max(...sources.map(newest)) > oldestOutput()) {
  process.stderr.write('building the server (sources changed)…\n');
  // JavaScript only: the server never reads the SDK's type declarations, which are most of a build's time
  // (`pnpm build` makes them, and `pnpm test` runs it first).
  const build = spawnSync('pnpm', ['--filter', '@bandcollab/server...', 'exec', 'tsup', '--no-dts'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) {
    process.stderr.write(`${build.stdout ?? ''}${build.stderr ?? ''}${build.error ? `${build.error.message}\n` : ''}the build failed\n`);
    process.exit(1);
  }
}
