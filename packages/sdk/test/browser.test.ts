import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toneWav, userWithCut } from '../../server/test/support/files.js';
import { client } from '../../server/test/support/http.js';
import { screenshotPath } from '../../server/test/support/screenshots.js';
import { requirePrerequisite } from '../../server/test/support/prerequisites.js';
import { startTestServer, type TestServer } from './support.js';

// The web build (dist/web.js, `pnpm test` builds first) in a real browser, Debian's chromium driven by
// playwright-core as the share-page tests do: a page on another origin, listed in CORS_ORIGINS, signs in,
// uploads the File an <input type=file> holds, hears its file.uploaded event over the WebSocket subprotocol
// and downloads it as a stream.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const WEB_BUILD = fileURLToPath(new URL('../dist/web.js', import.meta.url));
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>bandcollab web SDK</title>
<h1>Upload through the web SDK</h1>
<input type="file" id="file">
<pre id="log"></pre>
<script type="module">
  import * as sdk from '/sdk/web.js';
  window.sdk = sdk;
  window.log = (line) => { document.getElementById('log').textContent += line + '\\n'; };
</script>`;

const hasChromium = requirePrerequisite('chromium', existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (apt-get install chromium)`);

let pages: Server;
let pageOrigin: string;
let server: TestServer;
let work: string;
let browser: BrowserContext;

beforeAll(async () => {
  if (!hasChromium) return;
  const webBuild = await readFile(WEB_BUILD);
  pages = createServer((req, res) => {
    if (req.url === '/sdk/web.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(webBuild);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    else res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end();
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  server = await startTestServer({ CORS_ORIGINS: pageOrigin });
  work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-web-sdk-'));
  browser = await chromium.launchPersistentContext(path.join(work, 'profile'), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((resolve) => pages?.close(resolve));
  if (work) await rm(work, { recursive: true, force: true });
});

it.skipIf(!hasChromium)('signs in, uploads the chosen File, hears file.uploaded over the subprotocol and downloads it', async () => {
  const owner = await userWithCut(client(server.url));
  const wav = toneWav(0.5);
  const chosen = path.join(work, 'take.wav');
  await writeFile(chosen, wav);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  const webSockets: string[] = [];
  page.on('websocket', (socket) => webSockets.push(socket.url()));
  try {
    await page.goto(pageOrigin);
    await page.waitForFunction(() => 'sdk' in window);
    await page.locator('#file').setInputFiles(chosen);

    const result = await page.evaluate(
      async ({ baseUrl, email, password, cutId }) => {
        const { BandClient } = (window as unknown as { sdk: typeof import('../src/web.js') }).sdk;
        const log = (window as unknown as { log: (line: string) => void }).log;
        const client = new BandClient({ baseUrl });
        await client.auth.login({ email, password });
        log(`signed in as ${email}`);
        let greeted!: () => void;
        const hello = new Promise<void>((resolve) => (greeted = resolve));
        const uploaded = new Promise<{ type: string; data: unknown }>((resolve, reject) => {
          const subscription = client.events.subscribe({
            onHello: () => greeted(),
            onEvent: (event) => {
              if (event.type !== 'file.uploaded') return;
              subscription.close();
              resolve(event);
            },
          });
          subscription.closed.catch(reject);
        });
        await hello;
        log('events: hello');
        // The File itself: the browser streams it into the request from disk.
        const file = (document.getElementById('file') as HTMLInputElement).files![0]!;
        const record = await client.files.upload({ cutId, file });
        log(`uploaded ${file.name} as ${record.name}: ${record.id} (${record.size} bytes)`);
        const event = await uploaded;
        log(`events: ${event.type}`);
        const bytes = new Uint8Array(await new Response(await client.files.stream(record.id)).arrayBuffer());
        const sha256 = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
        log(`downloaded ${bytes.length} bytes, sha256 ${sha256.slice(0, 16)}…`);
        return { id: record.id, event, size: bytes.length, sha256 };
      },
      { baseUrl: server.url, email: owner.user.user.email, password: owner.user.password, cutId: owner.cutId },
    );

    expect(result.event).toMatchObject({ type: 'file.uploaded', data: { file: { id: result.id } } });
    expect(result.size).toBe(wav.length);
    expect(result.sha256).toBe(createHash('sha256').update(wav).digest('hex'));
    expect(webSockets).toEqual([`${server.url.replace(/^http/, 'ws')}/api/events`]);
    expect(errors).toEqual([]);
    await page.screenshot({ path: screenshotPath('web-sdk.png') });
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('reads the refusal of a file the server stops reading part-way, while the browser is still sending it', async () => {
  const owner = await userWithCut(client(server.url));
  const page = await browser.newPage();
  try {
    await page.goto(pageOrigin);
    await page.waitForFunction(() => 'sdk' in window);
    const refused = await page.evaluate(
      async ({ baseUrl, email, password, cutId }) => {
        const { BandClient, BandApiError } = (window as unknown as { sdk: typeof import('../src/web.js') }).sdk;
        const client = new BandClient({ baseUrl });
        await client.auth.login({ email, password });
        // Leading bytes that are no WAV: refused as soon as they arrive, with megabytes still to send.
        const noise = new File([new Uint8Array(3 * 1024 * 1024)], 'noise.wav');
        const error = await client.files.upload({ cutId, file: noise }).then(() => null, (e: unknown) => e);
        return error instanceof BandApiError ? { status: error.status, code: error.code } : String(error);
      },
      { baseUrl: server.url, email: owner.user.user.email, password: owner.user.password, cutId: owner.cutId },
    );
    expect(refused).toEqual({ status: 415, code: 'UNSUPPORTED_FILE_TYPE' });
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('cookie mode: signs in into the HttpOnly cookies, holds no token, refreshes through them and opens events with them', async () => {
  const owner = await userWithCut(client(server.url));
  const page = await browser.newPage();
  try {
    await page.goto(pageOrigin);
    await page.waitForFunction(() => 'sdk' in window);
    const signIn = await page.evaluate(
      async ({ baseUrl, email, password }) => {
        const { BandClient } = (window as unknown as { sdk: typeof import('../src/web.js') }).sdk;
        const band = new BandClient({ baseUrl, credentials: 'include' });
        (window as unknown as { band: typeof band }).band = band;
        await band.auth.login({ email, password });
        return { tokens: band.sessionTokens, cookies: document.cookie, me: (await band.auth.me()).email };
      },
      { baseUrl: server.url, email: owner.user.user.email, password: owner.user.password },
    );
    expect(signIn).toEqual({ tokens: { accessToken: undefined, refreshToken: undefined }, cookies: '', me: owner.user.user.email });

    server.clock.advance(server.config.accessTokenTtlSeconds + 1); // the access cookie's token expires
    const afterExpiry = await page.evaluate(async () => {
      const band = (window as unknown as { band: InstanceType<typeof import('../src/web.js').BandClient> }).band;
      const [first, second] = await Promise.all([band.auth.me(), band.projects.list()]);
      const hello = await new Promise<{ userId: string }>((resolve, reject) => {
        const subscription = band.events.subscribe({
          onEvent: () => undefined,
          onHello: (message) => {
            subscription.close();
            resolve(message);
          },
        });
        subscription.closed.catch(reject);
      });
      return { me: first.id, projects: second.length, hello: hello.userId };
    });
    expect(afterExpiry).toEqual({ me: owner.user.user.id, projects: 1, hello: owner.user.user.id });
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('answers every method called without its optional arguments, downloads without a target as a Blob', async () => {
  const owner = await userWithCut(client(server.url));
  const wav = toneWav(0.5);
  const page = await browser.newPage();
  try {
    await page.goto(pageOrigin);
    await page.waitForFunction(() => 'sdk' in window);
    const outcome = await page.evaluate(
      async ({ baseUrl, email, password, cutId, projectId, wavBase64 }) => {
        const { BandClient, BandApiError } = (window as unknown as { sdk: typeof import('../src/web.js') }).sdk;
        const band = new BandClient({ baseUrl });
        await band.auth.login({ email, password });
        const bytes = Uint8Array.from(atob(wavBase64), (char) => char.charCodeAt(0));
        const file = await band.files.upload({ cutId, file: new File([bytes], 'take.wav') });
        const fileShare = await band.files.share(file.id);
        const cutShare = await band.cuts.share(cutId);
        const vibe = await band.vibes.create(projectId, { name: 'Second idea' });
        const token = await band.tokens.create({ name: 'ci', scope: 'read', expiresIn: 3600 });
        const comment = await band.comments.create(file.id, { body: 'kick too loud', atMs: 100 });
        // Each call with its required arguments only: an answer or an API error, never a TypeError.
        const everyItem = async (list: AsyncIterable<unknown>) => {
          for await (const item of list) void item;
        };
        const calls: Record<string, () => Promise<unknown>> = {
          'auth.me': () => band.auth.me(),
          'projects.list': () => band.projects.list(),
          'projects.get': () => band.projects.get(projectId),
          'vibes.get': () => band.vibes.get(vibe.id),
          'cuts.get': () => band.cuts.get(cutId),
          'cuts.archive': () => (band.cuts.archive as (id: string) => Promise<unknown>)(cutId),
          'files.get': () => band.files.get(file.id),
          'files.versions': () => band.files.versions(file.id),
          'files.peaks': () => band.files.peaks(file.id),
          'files.entries': () => band.files.entries(file.id),
          'files.download': () => (band.files.download as (id: string) => Promise<unknown>)(file.id),
          'files.stream': () => band.files.stream(file.id).then((stream) => stream.cancel()),
          'files.storage': () => band.files.storage(),
          'comments.list': () => everyItem(band.comments.list(file.id)),
          'comments.listOfCut': () => everyItem(band.comments.listOfCut(cutId)),
          'comments.listOfProject': () => everyItem(band.comments.listOfProject(projectId)),
          'comments.get': () => band.comments.get(comment.id),
          'reviews.list': () => band.reviews.list(file.id),
          'reviews.set': () => band.reviews.set(file.id, 'approved'),
          'shares.get': () => band.shares.get(fileShare.shareUrl),
          'shares.comments': () => band.shares.comments(fileShare.shareUrl),
          'shares.list': () => band.shares.list({ fileId: file.id }),
          'shares.peaks': () => band.shares.peaks(fileShare.shareUrl),
          'shares.download': () => (band.shares.download as (token: string) => Promise<unknown>)(fileShare.shareUrl),
          'shares.downloadArchive': () => (band.shares.downloadArchive as (token: string) => Promise<unknown>)(cutShare.shareUrl),
          'shares.downloadFile': () => (band.shares.downloadFile as (token: string, id: string) => Promise<unknown>)(cutShare.shareUrl, file.id),
          'tokens.list': () => band.tokens.list(),
          'tokens.get': () => band.tokens.get(token.id),
          'tokens.current': () => band.tokens.current(),
        };
        const results: Record<string, string> = {};
        for (const [name, call] of Object.entries(calls)) {
          results[name] = await Promise.resolve().then(call).then(
            (value) => (value && typeof value === 'object' && 'blob' in value && value.blob instanceof Blob ? `blob ${value.blob.size} ${value.blob.type}` : 'ok'),
            (error: unknown) => (error instanceof BandApiError ? `api ${error.status}` : `thrown ${String(error)}`),
          );
        }
        return { results, size: file.size };
      },
      { baseUrl: server.url, email: owner.user.user.email, password: owner.user.password, cutId: owner.cutId, projectId: owner.projectId, wavBase64: wav.toString('base64') },
    );
    expect(Object.entries(outcome.results).filter(([, result]) => result.startsWith('thrown'))).toEqual([]);
    expect(outcome.results['files.download']).toBe(`blob ${wav.length} audio/wav`);
    expect(outcome.results['shares.downloadFile']).toBe(`blob ${wav.length} audio/wav`);
    expect(outcome.results['cuts.archive']).toMatch(/^blob \d+ application\/zip$/);
  } finally {
    await page.close();
  }
});
