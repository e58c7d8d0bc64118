import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';

// The web build as an app's bundler sees it (API §17): the BUILT package (dist/, `pnpm test` builds first)
// imported by name, its `exports` conditions choosing the build. esbuild fails on a node:* import for the
// browser platform, so a bundle that builds has none.

// 12 KiB until turn 4, when the reserved-path rule of session paths (shared with the server, checked before
// an upload is sent) took the build to about 12,340 B; 13 KiB until this round's webhooks, notifications,
// trash and previews resources and the paged lists (PagedList, listDeliveries, listEntries) took it to 13,346 B.
const BUDGET_GZIP_BYTES = 13.5 * 1024;
const packageDir = fileURLToPath(new URL('../../', import.meta.url));
/** An app that makes a client and uploads one file. */
const APP = `
import { BandClient } from '@bandcollab/sdk';
const client = new BandClient({ baseUrl: location.origin });
const input = document.querySelector('input');
client.files.upload({ cutId: input.dataset.cut, file: input.files[0] }).then(console.log);
`;

let app: string;
beforeAll(async () => {
  app = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-web-bundle-'));
  await mkdir(path.join(app, 'node_modules', '@bandcollab'), { recursive: true });
  await symlink(packageDir, path.join(app, 'node_modules', '@bandcollab', 'sdk'));
  await writeFile(path.join(app, 'app.js'), APP);
});
afterAll(() => rm(app, { recursive: true, force: true }));

async function bundle(options: { platform: 'browser' | 'neutral'; conditions?: string[] }) {
  const result = await build({
    entryPoints: [path.join(app, 'app.js')],
    absWorkingDir: app,
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    // Inputs named as the app sees them (node_modules/@bandcollab/sdk/…), not by the link's target.
    preserveSymlinks: true,
    ...options,
  });
  const bytes = result.outputFiles[0]!.contents;
  return { gzip: gzipSync(bytes, { level: 9 }).length, inputs: Object.keys(result.metafile.inputs) };
}

it('bundles a client and one upload for the browser within 13.5 KiB gzip, from dist/web.js alone', async () => {
  const { gzip, inputs } = await bundle({ platform: 'browser' });
  expect(inputs.filter((input) => input.includes('node_modules')).map((input) => input.replace(/.*node_modules\//, ''))).toEqual(['@bandcollab/sdk/dist/web.js']);
  console.log(`web build, client + one upload: ${gzip} bytes gzip (budget ${BUDGET_GZIP_BYTES})`);
  expect(gzip).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
});

it.each(['worker', 'workerd', 'deno', 'bun'])('the %s condition chooses the web build', async (condition) => {
  const { inputs } = await bundle({ platform: 'neutral', conditions: [condition, 'import'] });
  expect(inputs.some((input) => input.endsWith('@bandcollab/sdk/dist/web.js'))).toBe(true);
});
