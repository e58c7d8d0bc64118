import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ROUTES } from '../../src/contract/routes.js';

// The Node client (dist/index.*) and the CLI that bundles it carry the route table's run-time fields only: the
// OpenAPI prose is for the server's document and for apps that import @bandcollab/sdk/contract, not for every
// `band` command to parse at start-up (`pnpm test` builds first).
const sdkDist = fileURLToPath(new URL('../../dist/', import.meta.url));
const cliDist = fileURLToPath(new URL('../../../cli/dist/', import.meta.url));
const PROSE = [ROUTES.deleteAccount.description, ROUTES.uploadFile.description, ROUTES.exportComments.description].map((text) => text.slice(0, 60));

async function scripts(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((name) => /\.(c?js)$/.test(name)).map((name) => path.join(dir, name));
}

it('leaves the route documentation (and the zod of its queries) out of the Node client and the CLI, and keeps it in the contract', async () => {
  const client = [path.join(sdkDist, 'index.js'), path.join(sdkDist, 'index.cjs')];
  for (const file of [...client, ...(await scripts(cliDist))]) {
    const text = await readFile(file, 'utf8');
    for (const prose of PROSE) expect(text.includes(prose), `${path.relative(path.join(sdkDist, '../..'), file)} holds "${prose}"`).toBe(false);
    // The feature tables declare their queries as zod objects: leaving them out leaves zod out too.
    expect(/\bfrom\s*["']zod["']|require\(["']zod["']\)/.test(text), `${path.relative(path.join(sdkDist, '../..'), file)} imports zod`).toBe(false);
  }
  const contract = await readFile(path.join(sdkDist, 'contract', 'index.js'), 'utf8');
  for (const prose of PROSE) expect(contract).toContain(prose);
});
