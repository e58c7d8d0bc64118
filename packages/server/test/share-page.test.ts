import { afterAll, beforeAll, expect, it } from 'vitest';
import { analysed, sampleBytes, toneWav, upload, userWithCut } from './support/files.js';
import { call, client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(() => server?.close());

async function sharedPage(fileName: string, bytes: Buffer, name: string) {
  const file = (await upload(api, owner.token, owner.cutId, fileName, bytes, name)).body;
  const { token } = (await api.request('POST', `/api/files/${file.id}/share`, { token: owner.token })).body;
  return { token, page: await call(server.url, 'GET', `/share/${token}`) };
}

/** Nothing on the page may come from elsewhere, and the only script it may run is its own, from this server (no inline script). */
function expectSelfContained(html: string, headers: Headers) {
  // The one <link> is the icon, inline (no request for /favicon.ico): allowed by img-src data:.
  expect(html).not.toMatch(/<script(?! src="\/share-assets\/share-page\.js" defer><\/script>)|<link(?! rel="icon" href="data:image\/svg\+xml,)|<iframe|@import|url\(/i);
  expect(html).toMatch(/<link rel="icon" href="data:image\/svg\+xml,%3Csvg%20/);
  expect(html).not.toMatch(/(src|href)="(https?:)?\/\//i);
  const csp = headers.get('content-security-policy')!;
  expect(csp).toMatch(/^default-src 'none'/);
  expect(csp).not.toMatch(/https?:|\*|unsafe-/);
  expect(csp).toMatch(/script-src 'self';/);
  expect(csp).toMatch(/img-src data: 'self';/);
}

it('shows an audio player, the name, type and size (no API type codes), and a download button for a CUT', async () => {
  const { token, page } = await sharedPage('demo.wav', sampleBytes('wav', 3 * 1024 + 512), 'Demo <b>&</b> "take"');
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(page.text).toContain('<h1>Demo &#60;b&#62;&#38;&#60;/b&#62; &#34;take&#34;</h1>');
  expect(page.text).toContain('Audio · 3.5 KiB');
  expect(page.text).toContain(`<audio controls preload="metadata" src="/api/share/${token}"></audio>`);
  expect(page.text).toContain(`<a class="download" href="/api/share/${token}?download=1" download>Download</a>`);
  expect(page.text).not.toContain('<img');
  expectSelfContained(page.text, page.headers);
  expect(page.headers.get('referrer-policy')).toBe('no-referrer');
});

it('shows an analysed CUT with its duration, format, loudness and the waveform drawn inline', async () => {
  const file = (await upload(api, owner.token, owner.cutId, 'tone.wav', toneWav(65), 'Tone')).body;
  await analysed(api, owner.token, file.id);
  const { token } = (await api.request('POST', `/api/files/${file.id}/share`, { token: owner.token })).body;
  const page = await call(server.url, 'GET', `/share/${token}`);
  expect(page.status).toBe(200);
  expect(page.text).toMatch(/<p class="meta">1:05 · PCM, 8 kHz, 16-bit, mono · -\d+\.\d LUFS, range \d+\.\d LU, true peak -\d+\.\d dBTP<\/p>/);
  expect(page.text).toMatch(/<div class="wave" data-duration-ms="65\d{3}"><svg class="waveform" viewBox="0 0 \d{4} 256"/);
  expect(page.text).toContain('<script src="/share-assets/share-page.js" defer></script>');
  expectSelfContained(page.text, page.headers);
  // Before the analysis, or for a file that failed it, the page has no waveform and no script.
  const failed = await sharedPage('broken.wav', sampleBytes('wav', 2000), 'Broken');
  expect(failed.page.text).not.toMatch(/<svg|<script/);
});

it('shows the picture of an IMAGE and no player for stems', async () => {
  const image = await sharedPage('cover.png', sampleBytes('png', 100), 'Cover');
  expect(image.page.text).toContain(`<img src="/api/share/${image.token}" alt="Cover">`);
  expect(image.page.text).toContain('Image · 100 bytes');
  expectSelfContained(image.page.text, image.page.headers);
  const stems = await sharedPage('stems.zip', sampleBytes('zip', 2 * 1024 * 1024), 'Stems');
  expect(stems.page.text).toContain('Stems (ZIP) · 2.0 MiB');
  expect(stems.page.text).not.toMatch(/<audio|<img/);
});

it('answers HEAD without a body', async () => {
  const { token } = await sharedPage('a.mp3', sampleBytes('mp3', 10), 'A');
  const head = await call(server.url, 'HEAD', `/share/${token}`);
  expect(head.status).toBe(200);
  expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
  expect(head.text).toBe('');
});

it('shows a plain 404 page for a bad link', async () => {
  const page = await call(server.url, 'GET', `/share/${'x'.repeat(43)}`);
  expect(page.status).toBe(404);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(page.text).toContain('<h1>Link not found</h1>');
  expectSelfContained(page.text, page.headers);
});

it('says an AIFF plays after download, as no browser plays it; a WAV page says nothing of the kind', async () => {
  const aiff = await sharedPage('take.aiff', sampleBytes('aiff', 2048), 'Take');
  expect(aiff.page.text).toContain('Browsers do not play this format: download it to listen.');
  const wav = await sharedPage('take.wav', sampleBytes('wav', 2048), 'Take');
  expect(wav.page.text).not.toContain('Browsers do not play');
});

it('lists a cut link’s files by name, in natural order', async () => {
  const cutOwner = await userWithCut(api);
  for (const name of ['Take 10', 'bass', 'Take 2']) await upload(api, cutOwner.token, cutOwner.cutId, `${name}.wav`, sampleBytes('wav', 512), name);
  const { token } = (await api.request('POST', `/api/cuts/${cutOwner.cutId}/share`, { token: cutOwner.token })).body;
  const page = (await call(server.url, 'GET', `/share/${token}`)).text;
  const order = ["bass", "Take 2", "Take 10"].map((name) => page.indexOf(`<p class="file">${name} `));
  expect(order.every((at) => at > 0), page).toBe(true);
  expect([...order].sort((a, b) => a - b)).toEqual(order);
});
