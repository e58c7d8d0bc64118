import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { analysed, toneWav, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { requirePrerequisite } from './support/prerequisites.js';
import { screenshotPath } from './support/screenshots.js';
import { startTestServer, type TestServer } from './support/server.js';
import { readZip } from './support/zip.js';

// The share page in a real browser: Debian's chromium driven by playwright-core (STACK.md).

const CHROMIUM = '/usr/bin/chromium';
/** Without the networking flags Chromium floods the closed network with refused connections. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** A real 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const hasChromium = requirePrerequisite('chromium', existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (apt-get install chromium)`);

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;
let profileDir: string;
let browser: BrowserContext;

beforeAll(async () => {
  if (!hasChromium) return;
  server = await startTestServer();
  api = client(server.url);
  owner = await userWithCut(api);
  profileDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-chromium-'));
  browser = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, acceptDownloads: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
  await server?.close();
});

async function sharePath(fileName: string, bytes: Buffer, name: string): Promise<string> {
  const file = (await upload(api, owner.token, owner.cutId, fileName, bytes, name)).body;
  const { token } = (await api.request('POST', `/api/files/${file.id}/share`, { token: owner.token })).body;
  return `/share/${token}`;
}

/**
 * Opens a page and records every request it makes, and as errors every failed response (but the favicon
 * the browser asks for on its own) and console error (CSP violations land there).
 */
async function open(pagePath: string) {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) errors.push(`${response.status()} ${response.url()}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
  });
  const response = await page.goto(`${server.url}${pagePath}`);
  return { page, response, requests, errors };
}

it.skipIf(!hasChromium)('plays a shared CUT: the audio element loads the file, reports its duration and seeks', async () => {
  const { page, response, requests, errors } = await open(await sharePath('tone.wav', toneWav(1.5), 'Tone'));
  try {
    expect(response?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('Tone');
    await page.waitForFunction(() => {
      const audio = document.querySelector('audio');
      return audio !== null && audio.readyState >= 1 && Number.isFinite(audio.duration);
    });
    const duration = await page.locator('audio').evaluate((audio: HTMLAudioElement) => audio.duration);
    expect(duration).toBeCloseTo(1.5, 1);
    const seeked = await page.locator('audio').evaluate(
      (audio: HTMLAudioElement) =>
        new Promise<number>((resolve) => {
          audio.addEventListener('seeked', () => resolve(audio.currentTime), { once: true });
          audio.currentTime = 1.2;
        }),
    );
    expect(seeked).toBeCloseTo(1.2, 1);
    expect(requests.every((url) => url.startsWith(server.url))).toBe(true);
    expect(errors).toEqual([]);
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('seeks the player where the waveform is clicked', async () => {
  const file = (await upload(api, owner.token, owner.cutId, 'long-tone.wav', toneWav(20), 'Long tone')).body;
  await analysed(api, owner.token, file.id);
  const { token } = (await api.request('POST', `/api/files/${file.id}/share`, { token: owner.token })).body;
  const { page, errors } = await open(`/share/${token}`);
  try {
    await page.waitForFunction(() => (document.querySelector('audio')?.readyState ?? 0) >= 1);
    expect(await page.locator('audio').evaluate((audio: HTMLAudioElement) => audio.currentTime)).toBe(0);
    const wave = page.locator('svg.waveform');
    const box = (await wave.boundingBox())!;
    const seeked = page.locator('audio').evaluate(
      (audio: HTMLAudioElement) => new Promise<number>((resolve) => audio.addEventListener('seeked', () => resolve(audio.currentTime), { once: true })),
    );
    await wave.click({ position: { x: box.width * 0.75, y: box.height / 2 } });
    expect(await seeked).toBeCloseTo(15, 0);
    expect(errors).toEqual([]);
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('shows a shared IMAGE and downloads it under its name', async () => {
  const { page, errors } = await open(await sharePath('dot.png', PNG, 'Dot'));
  try {
    await page.waitForFunction(() => (document.querySelector('img')?.naturalWidth ?? 0) > 0);
    expect(await page.locator('img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('Download').click()]);
    expect(download.suggestedFilename()).toBe('Dot.png');
    expect(errors).toEqual([]);
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('shows the plain 404 page for a bad link', async () => {
  const { page, response } = await open(`/share/${'z'.repeat(43)}`);
  try {
    expect(response?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Link not found');
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('lists a shared cut: its files with players that play, and a Download all that saves the ZIP', async () => {
  const created = await api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name: 'Take 3' } });
  const cutId = created.body.id as string;
  const tone = toneWav(1.5);
  await upload(api, owner.token, cutId, 'tone.wav', tone, 'Tone');
  await upload(api, owner.token, cutId, 'dot.png', PNG, 'Dot');
  const { token } = (await api.request('POST', `/api/cuts/${cutId}/share`, { token: owner.token })).body;
  const { page, response, requests, errors } = await open(`/share/${token}`);
  try {
    expect(response?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('Take 3');
    expect(await page.locator('li .file').allTextContents()).toEqual([expect.stringMatching(/^Dot /), expect.stringMatching(/^Tone /)]);
    expect(await page.locator('audio').count()).toBe(1);
    // Muted, a page may start playback without a user gesture.
    const played = await page.locator('audio').evaluate(
      (audio: HTMLAudioElement) =>
        new Promise<number>((resolve, reject) => {
          audio.muted = true;
          audio.addEventListener('timeupdate', () => audio.currentTime > 0.2 && resolve(audio.currentTime));
          audio.play().catch(reject);
        }),
    );
    expect(played).toBeGreaterThan(0.2);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('Download all').click()]);
    expect(download.suggestedFilename()).toBe('Take 3.zip');
    const { entries } = await readZip(await readFile((await download.path())!));
    expect(entries.map((entry) => entry.name)).toEqual(['Tone.wav', 'Dot.png']);
    expect(entries[0]!.bytes.equals(tone)).toBe(true);
    expect(requests.every((url) => url.startsWith(server.url))).toBe(true);
    expect(errors).toEqual([]);
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('seeks the player of the waveform clicked on a shared cut with several takes', async () => {
  const created = await api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name: 'Two takes' } });
  const cutId = created.body.id as string;
  for (const [fileName, seconds] of [['a short.wav', 8], ['b long.wav', 20]] as const) {
    const file = (await upload(api, owner.token, cutId, fileName, toneWav(seconds), fileName)).body;
    await analysed(api, owner.token, file.id);
  }
  const { token } = (await api.request('POST', `/api/cuts/${cutId}/share`, { token: owner.token })).body;
  const { page, errors } = await open(`/share/${token}`);
  try {
    await page.waitForFunction(() => [...document.querySelectorAll('audio')].every((audio) => audio.readyState >= 1));
    expect(await page.locator('svg.waveform').count()).toBe(2);
    const second = page.locator('audio').nth(1);
    const seeked = second.evaluate(
      (audio: HTMLAudioElement) => new Promise<number>((resolve) => audio.addEventListener('seeked', () => resolve(audio.currentTime), { once: true })),
    );
    const wave = page.locator('svg.waveform').nth(1);
    const box = (await wave.boundingBox())!;
    await wave.click({ position: { x: box.width * 0.5, y: box.height / 2 } });
    expect(await seeked).toBeCloseTo(10, 0);
    expect(await page.locator('audio').first().evaluate((audio: HTMLAudioElement) => audio.currentTime)).toBe(0);
    expect(errors).toEqual([]);
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('a feedback link: markers on the waveform seek and show their comment, a comment at the playhead appears, hostile names and bodies stay text', async () => {
  const file = (await upload(api, owner.token, owner.cutId, 'mix.wav', toneWav(20), 'Final mix')).body;
  await analysed(api, owner.token, file.id);
  const { token } = (await api.request('POST', `/api/files/${file.id}/share`, { token: owner.token, json: { allowComments: true } })).body;
  const hostile = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', '\u001b[31m'];
  await api.request('POST', `/api/files/${file.id}/comments`, { token: owner.token, json: { body: 'Snare drops out here', atMs: 5000 } });
  await api.request('POST', `/api/share/${token}/comments`, { json: { name: hostile[0], body: `${hostile[1]} bass swells`, atMs: 12_000, endMs: 15_000 } });
  // A control character is refused in a body, and kept as text in a name only as far as the contract allows it.
  expect((await api.request('POST', `/api/share/${token}/comments`, { json: { name: 'Lee', body: hostile[2] } })).status).toBe(400);
  const { page, requests, errors } = await open(`/share/${token}`);
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  try {
    await page.waitForFunction(() => document.querySelectorAll('.marker').length === 2);
    // Every comment is listed under the player without a click, as text.
    expect(await page.locator('.comments > .comment .author').allTextContents()).toEqual([expect.any(String), hostile[0]]);
    expect(await page.locator('.comments > .comment .body').nth(1).textContent()).toBe(`${hostile[1]} bass swells`);
    expect(await page.locator('img').count()).toBe(0);

    const muted = await page.locator('audio').evaluate((audio: HTMLAudioElement) => {
      audio.muted = true;
      return audio.play().then(() => true);
    });
    expect(muted).toBe(true);
    const seeked = page.locator('audio').evaluate(
      (audio: HTMLAudioElement) => new Promise<number>((resolve) => audio.addEventListener('seeked', () => resolve(audio.currentTime), { once: true })),
    );
    await page.locator('.marker').nth(1).click();
    expect(await seeked).toBeCloseTo(12, 0);
    expect(await page.locator('.marker-note').isVisible()).toBe(true);
    expect(await page.locator('.marker-note .body').textContent()).toBe(`${hostile[1]} bass swells`);
    await page.locator('audio').evaluate((audio: HTMLAudioElement) => audio.pause());

    // Comment at the playhead.
    await page.locator('audio').evaluate(
      (audio: HTMLAudioElement) =>
        new Promise<void>((resolve) => {
          audio.addEventListener('seeked', () => resolve(), { once: true });
          audio.currentTime = 8;
        }),
    );
    expect(await page.locator('input[name=at]').inputValue()).toBe('0:08.0');
    await page.locator('input[name=name]').fill(hostile[1]!);
    await page.locator('textarea[name=body]').fill(`${hostile[0]} lift the vocal here`);
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.waitForFunction(() => document.querySelectorAll('.marker').length === 3);
    expect(await page.locator('.comments > .comment .author').allTextContents()).toEqual([expect.any(String), hostile[1], hostile[0]]);
    expect(await page.locator('.comments > .comment .body').nth(1).textContent()).toBe(`${hostile[0]} lift the vocal here`);
    expect(await page.locator('.comments > .comment .time').nth(1).textContent()).toBe('0:08.0');
    const stored = (await api.request('GET', `/api/share/${token}/comments`)).body.comments;
    expect(stored.map((comment: { atMs: number }) => comment.atMs)).toEqual([5000, 8000, 12_000]);
    expect(await page.locator('img, .comments script').count()).toBe(0);
    expect(dialogs).toEqual([]);

    await page.setViewportSize({ width: 900, height: 1200 });
    await page.screenshot({ path: screenshotPath('feedback-page.png'), fullPage: true });
    expect(requests.every((url) => url.startsWith(server.url))).toBe(true);
    expect(errors).toEqual([]);
  } finally {
    await page.close();
  }
});

it.skipIf(!hasChromium)('the API reference reads as a page in the browser: headings, tables and code, nothing blocked, placeholders as text', async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  try {
    const response = await page.goto(`${server.url}/api/reference`);
    expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8');
    expect(await page.locator('h3').count()).toBeGreaterThan(100);
    expect(await page.locator('h3', { hasText: 'GET /api/projects' }).count()).toBeGreaterThan(0);
    expect(await page.locator('table').count()).toBeGreaterThan(5);
    // `<id>` outside code is text on the page, not an element.
    expect(await page.locator('id').count()).toBe(0);
    const style = await page.evaluate(() => getComputedStyle(document.querySelector('main')!).maxWidth);
    expect(style).toBe('960px');
    await page.screenshot({ path: screenshotPath('api-reference.png') });
    expect(problems).toEqual([]);
  } finally {
    await page.close();
  }
});
