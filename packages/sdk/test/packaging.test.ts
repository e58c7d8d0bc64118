import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support.js';

// These run the BUILT package (dist/), as an application would: `pnpm test` builds before vitest runs.
// Client memory during an upload is measured by `pnpm bench` (bench/run.mjs), not bounded here.
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const run = promisify(execFile);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('the built package', () => {
  it.each(['smoke.mjs', 'smoke.cjs'])('%s imports it through the exports map and runs real calls', async (script) => {
    const { stdout } = await run(process.execPath, [path.join(fixtures, script), server.url]);
    expect(JSON.parse(stdout)).toEqual({ same: true, notFound: 'NOT_FOUND', zip: 'STEM' });
  });
});
