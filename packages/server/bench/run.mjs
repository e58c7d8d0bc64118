// Runs every benchmark of the server, one after another: each is a file `bench/*.bench.mjs` that prints
// one JSON line per figure. They measure the built server (`pnpm build` first; the root `pnpm bench` does).
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
for (const file of readdirSync(here).filter((name) => name.endsWith('.bench.mjs')).sort()) {
  console.error(`# ${file}`);
  execFileSync(process.execPath, [path.join(here, file)], { stdio: 'inherit' });
}
