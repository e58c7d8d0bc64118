// The share page plays previews and compares versions in a real browser (§20): Debian's chromium driven by
// playwright-core, as test/share-page-browser.test.ts does.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { FileRecord } from '@bandcollab/sdk';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uploadForm, userWithCut } from '../support/files.js';
import { client } from '../support/http.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { screenshotPath } from '../support/screenshots.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { generate, hasFfmpeg } from '../analysis/ffmpeg.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // The test clicks, as a listener would; this only spares it a real audio device.
  '--autoplay-policy=no-user-gesture-required',
];
const hasChromium = requirePrerequisite('chromium', existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (apt-get install chromium)`);

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;
let dir: string;
let browser: BrowserContext;

beforeAll(async () => {
  if (!hasChromium || !hasFfmpeg) return;
  server = await startTestServer();
  api = client(server.url);
  owner = await userWithCut(api);
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-ab-'));
  browser = await chromium.launchPersistentContext(path.join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function previewed(id: string): Promise<FileRecord> {
  for (const until = Date.now() + 90_000; ; ) {
    const { body } = await api.request<FileRecord>('GET', `/api/files/${id}`, { token: owner.token });
    // The page's gains come from the loudness: a WAV's early preview can be ready before its analysis.
    if (body.preview.status !== 'pending' && body.analysis !== 'pending') return body;
    if (Date.now() > until) throw new Error(`preview or analysis of ${id} still pending`);
    await delay(50);
  }
}

/** The gain the page must apply: to −14 LUFS, lowered so the true peak stays at or below −1 dBTP. */
const expectedGain = ({ audio }: FileRecord): number => {
  const { integratedLufs, truePeakDbtp } = audio!.loudness;
  return 10 ** (Math.min(-14 - integratedLufs!, -1 - truePeakDbtp!) / 20);
};

it.skipIf(!hasChromium || !hasFfmpeg)('a cut link plays the previews and matches two versions: same position on a switch, gains from their loudness', async () => {
  // Version 1 quiet, version 2 loud (its boost would cross −1 dBTP: the ceiling lowers it).
  const quiet = path.join(dir, 'quiet.wav');
  const loud = path.join(dir, 'loud.wav');
  generate('aevalsrc=0.05*sin(2*PI*440*t)|0.05*sin(2*PI*440*t)', 8, ['-ar', '48000', '-c:a', 'pcm_s16le'], quiet);
  generate('aevalsrc=0.7*sin(2*PI*440*t)+0.2*sin(2*PI*3000*t)|0.7*sin(2*PI*440*t)', 8, ['-ar', '48000', '-c:a', 'pcm_s16le'], loud);
  const first = (await uploadForm(api, owner.token, [{ name: 'cutId', value: owner.cutId }, { name: 'file', value: await readFile(quiet), fileName: 'mix.wav' }])).body as FileRecord;
  const second = (await uploadForm(api, owner.token, [{ name: 'versionOf', value: first.id }, { name: 'file', value: await readFile(loud), fileName: 'mix.wav' }])).body as FileRecord;
  const [v1, v2] = [await previewed(first.id), await previewed(second.id)];
  expect([v1.preview.status, v2.preview.status]).toEqual(['done', 'done']);
  const { token } = (await api.request('POST', `/api/cuts/${owner.cutId}/share`, { token: owner.token, json: {} })).body;

  const page = await browser.newPage();
  const errors: string[] = [];
  const fetched: { url: string; range: string | undefined }[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) errors.push(`${response.status()} ${response.url()}`);
  });
  page.on('request', (request) => fetched.push({ url: request.url(), range: request.headers().range }));
  try {
    await page.goto(`${server.url}/share/${token}`);
    const audioOf = (file: FileRecord) => page.locator(`#player-${file.id} audio`);
    // The players play the previews, not the originals.
    expect(await audioOf(v1).getAttribute('src')).toBe(`/api/share/${token}/files/${v1.id}/preview`);
    expect(await audioOf(v2).getAttribute('src')).toBe(`/api/share/${token}/files/${v2.id}/preview`);
    expect(fetched.some(({ url }) => url.endsWith(`/files/${v1.id}`) || url.endsWith(`/files/${v2.id}`))).toBe(false);

    await page.getByRole('button', { name: 'Play' }).click();
    await page.waitForFunction((id) => (document.querySelector(`#player-${id} audio`) as HTMLAudioElement).currentTime > 1, v1.id, { timeout: 20_000 });

    // Switch to version 2 while playing: it starts where version 1 stopped.
    const switched = await page.evaluate(async ([from, to]) => {
      const a = document.querySelector(`#player-${from} audio`) as HTMLAudioElement;
      const b = document.querySelector(`#player-${to} audio`) as HTMLAudioElement;
      const seeked = new Promise((resolve) => b.addEventListener('seeked', resolve, { once: true }));
      (document.querySelector(`[data-target="player-${to}"]`) as HTMLButtonElement).click();
      const stoppedAt = a.currentTime;
      await seeked;
      return { stoppedAt, startedAt: b.currentTime, aPaused: a.paused };
    }, [v1.id, v2.id] as const);
    expect(switched.aPaused).toBe(true);
    expect(Math.abs(switched.startedAt - switched.stoppedAt)).toBeLessThan(0.02);
    await page.waitForFunction(([id, from]) => (document.querySelector(`#player-${id} audio`) as HTMLAudioElement).currentTime > (from as number) + 0.3, [v2.id, switched.startedAt] as const, {
      timeout: 20_000,
    });

    // The gains applied are the ones the loudness calls for.
    const applied = await page.evaluate(([a, b]) => [a, b].map((id) => Number((document.querySelector(`#player-${id} audio`) as HTMLAudioElement).dataset.appliedGain)), [v1.id, v2.id] as const);
    expect(applied[0]).toBeCloseTo(expectedGain(v1), 4);
    expect(applied[1]).toBeCloseTo(expectedGain(v2), 4);
    // The quiet one is boosted, the loud one cut, and neither crosses −1 dBTP.
    expect(applied[0]).toBeGreaterThan(1);
    expect(applied[1]).toBeLessThan(1);
    expect(v2.audio!.loudness.truePeakDbtp! + 20 * Math.log10(applied[1]!)).toBeLessThanOrEqual(-1 + 1e-6);

    // The lossless toggle plays the original at the same position.
    const before = await audioOf(v2).evaluate((audio: HTMLAudioElement) => audio.currentTime);
    await page.locator(`#player-${v2.id} .lossless input`).check();
    await page.waitForFunction(([id, at]) => {
      const audio = document.querySelector(`#player-${id} audio`) as HTMLAudioElement;
      return audio.src.endsWith(`/files/${id}`) && audio.readyState >= 1 && audio.currentTime >= (at as number);
    }, [v2.id, before] as const, { timeout: 20_000 });

    expect(fetched.filter(({ url }) => url.includes('/preview')).length).toBeGreaterThan(0);
    await page.screenshot({ path: screenshotPath('share-page-ab.png'), fullPage: true });
    expect(errors, errors.join("\n")).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);

it.skipIf(!hasChromium || !hasFfmpeg)('a latest link compares the versions of its series, each through its own preview under the link, and a stream-only one offers no download', async () => {
  const soft = path.join(dir, 'soft.wav');
  const hot = path.join(dir, 'hot.wav');
  generate('aevalsrc=0.1*sin(2*PI*330*t)|0.1*sin(2*PI*330*t)', 6, ['-ar', '44100', '-c:a', 'pcm_s16le'], soft);
  generate('aevalsrc=0.5*sin(2*PI*330*t)|0.5*sin(2*PI*330*t)', 6, ['-ar', '44100', '-c:a', 'pcm_s16le'], hot);
  const first = (await uploadForm(api, owner.token, [{ name: 'cutId', value: owner.cutId }, { name: 'file', value: await readFile(soft), fileName: 'song.wav' }])).body as FileRecord;
  const second = (await uploadForm(api, owner.token, [{ name: 'versionOf', value: first.id }, { name: 'file', value: await readFile(hot), fileName: 'song.wav' }])).body as FileRecord;
  const [v1, v2] = [await previewed(first.id), await previewed(second.id)];
  const { token } = (await api.request('POST', `/api/files/${v2.id}/share`, { token: owner.token, json: { follow: 'latest', download: false } })).body;
  // The version's preview under the link; a version the series does not have is 404.
  expect((await fetch(`${server.url}/api/share/${token}/preview?version=1`)).status).toBe(200);
  expect((await fetch(`${server.url}/api/share/${token}/preview?version=9`)).status).toBe(404);

  const page = await browser.newPage();
  try {
    await page.goto(`${server.url}/share/${token}`);
    expect(await page.locator('a.download').count()).toBe(0);
    expect(await page.locator(`#player-${v1.id} audio`).getAttribute('src')).toBe(`/api/share/${token}/preview?version=1`);
    expect(await page.locator(`#player-${v2.id} audio`).getAttribute('src')).toBe(`/api/share/${token}/preview`);
    await page.getByRole('button', { name: 'Version 2' }).click();
    await page.getByRole('button', { name: 'Play' }).click();
    await page.waitForFunction((id) => (document.querySelector(`#player-${id} audio`) as HTMLAudioElement).currentTime > 0.5, v2.id, { timeout: 20_000 });
    const switched = await page.evaluate(async ([from, to]) => {
      const a = document.querySelector(`#player-${from} audio`) as HTMLAudioElement;
      const b = document.querySelector(`#player-${to} audio`) as HTMLAudioElement;
      const seeked = new Promise((resolve) => b.addEventListener('seeked', resolve, { once: true }));
      (document.querySelector(`[data-target="player-${to}"]`) as HTMLButtonElement).click();
      const stoppedAt = a.currentTime;
      await seeked;
      return { stoppedAt, startedAt: b.currentTime };
    }, [v2.id, v1.id] as const);
    expect(Math.abs(switched.startedAt - switched.stoppedAt)).toBeLessThan(0.02);
    const applied = await page.evaluate(([a, b]) => [a, b].map((id) => Number((document.querySelector(`#player-${id} audio`) as HTMLAudioElement).dataset.appliedGain)), [v1.id, v2.id] as const);
    expect(applied[0]).toBeCloseTo(expectedGain(v1), 4);
    expect(applied[1]).toBeCloseTo(expectedGain(v2), 4);
    await page.screenshot({ path: screenshotPath('share-page-latest-ab.png'), fullPage: true });
  } finally {
    await page.close();
  }
}, 120_000);
