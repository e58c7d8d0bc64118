import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

// On a Node older than the engines field allows, the server and band say in one line what they need and exit 1,
// before loading anything that Node could not run (band on Node 20 died with a SyntaxError about enableCompileCache).
const OLDER_NODE = fileURLToPath(new URL('./support/older-node.mjs', import.meta.url));
const ENTRIES = {
  'bandcollab-server': fileURLToPath(new URL('../dist/main.js', import.meta.url)),
  band: fileURLToPath(new URL('../../cli/dist/band.cjs', import.meta.url)),
};

for (const [name, entry] of Object.entries(ENTRIES)) {
  it(`${name} on Node 20 names the Node it needs in one line and exits 1`, async () => {
    const failure = await promisify(execFile)(process.execPath, ['--import', OLDER_NODE, entry, '--version'], { env: { ...process.env, HOME: '/nonexistent' } }).then(
      () => null,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1, stdout: '', stderr: `${name} needs Node.js 22.19 or newer; this is v20.20.2 (${process.execPath})\n` });
  });
}
