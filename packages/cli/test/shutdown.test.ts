import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let proxy: { url: string; throttle: boolean; server: Server };
let user: CliUser;
let work: string;
let closed = false;

/**
 * A TCP relay in front of the server that, once `throttle` is on, forwards what clients send at about
 * 1 MB/s: an upload then lasts long enough for the server to be stopped in its middle.
 */
async function throttlingProxy(target: URL): Promise<typeof proxy> {
  const relay = { url: '', throttle: false, server: createServer() };
  relay.server.on('connection', (client) => {
    const upstream = connect(Number(target.port), target.hostname);
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (!relay.throttle) return;
      client.pause();
      setTimeout(() => client.resume(), chunk.length / 1000);
    });
    client.on('end', () => upstream.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
  const address = relay.server.address();
  relay.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return relay;
}

beforeAll(async () => {
  server = await startTestServer({ SHUTDOWN_GRACE_SECONDS: '0' });
  proxy = await throttlingProxy(new URL(server.url));
  user = await cliUser(proxy.url);
  await registerWithCli(user, 'ana@example.com');
  await user.band(['project', 'create', 'Demo']);
  await user.band(['vibe', 'create', 'Verse', '--project', 'Demo']);
  await user.band(['cut', 'create', 'Take 1', '--vibe', 'Verse', '--project', 'Demo']);
  work = await mkdtemp(path.join(os.tmpdir(), 'band-shutdown-'));
});

afterAll(async () => {
  await user?.cleanup();
  proxy?.server.close();
  if (work) await rm(work, { recursive: true, force: true });
  if (!closed) await server?.close();
});

it('band file upload cut by a server shutting down says so and exits 5 (unavailable)', async () => {
  // Under 8 MiB, so a multipart upload (a resumable one keeps its bytes and is resumed: resume.test.ts).
  await writeFile(path.join(work, 'long.wav'), wavBytes(1, 7 * 1024 * 1024));
  proxy.throttle = true;
  const upload = user.band(['file', 'upload', 'long.wav', '--cut', 'Take 1', '--vibe', 'Verse', '--project', 'Demo'], { cwd: work });

  const tmp = path.join(server.dataDir, 'tmp');
  for (const started = Date.now(); (await readdir(tmp)).length === 0; ) {
    if (Date.now() - started > 60_000) throw new Error('the upload never reached the server');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  closed = true;
  await server.close();

  const result = await upload;
  expect(result.stderr).toMatch(/long\.wav: The server is shutting down: nothing was stored/);
  expect(result.stderr).toMatch(/retry after 5 s/);
  expect(result.stderr).not.toMatch(/size limit/);
  expect(result.exitCode).toBe(5);
});
