import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav } from '../../server/test/support/files.js';
import { zipOf } from '../../server/test/support/zip.js';
import { BandApiError, type BandClient, type Cut } from '../src/index.js';
import { registeredClient, startTestServer, type TestServer } from './support.js';

async function clientWithCut(server: TestServer): Promise<{ client: BandClient; cut: Cut }> {
  const { client } = await registeredClient(server.url);
  const project = await client.projects.create({ name: 'Analysis' });
  const vibe = await client.vibes.create(project.id, { name: 'Verse' });
  return { client, cut: await client.cuts.create(vibe.id, { name: 'Take' }) };
}

describe('an analysing server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('waits for the analysis of an upload, then reads its AudioInfo and waveform', async () => {
    const { client, cut } = await clientWithCut(server);
    const uploaded = await client.files.upload({ cutId: cut.id, file: toneWav(3), filename: 'tone.wav' });
    expect(uploaded.analysis).toBe('pending');
    const file = await client.files.waitForAnalysis(uploaded.id, { signal: AbortSignal.timeout(30_000) });
    expect(file).toMatchObject({ analysis: 'done', audio: { codec: 'pcm', durationMs: 3000, sampleRate: 8000, bitDepth: 16, channels: 1 } });
    const peaks = await client.files.peaks(file.id);
    expect(peaks).toMatchObject({ version: 2, channels: 1, sample_rate: 8000, bits: 8 });
    expect(peaks.data).toHaveLength(peaks.length * 2);
  });

  it("pages through a STEM ZIP's entries with entries(id, {cursor, limit})", async () => {
    const { client, cut } = await clientWithCut(server);
    const zip = await zipOf(Array.from({ length: 5 }, (_, i): [string, Buffer] => [`stem-${i}.wav`, toneWav(0.1)]));
    const uploaded = await client.files.upload({ cutId: cut.id, file: zip, filename: 'stems.zip' });
    await client.files.waitForAnalysis(uploaded.id, { signal: AbortSignal.timeout(30_000) });
    const paths: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.files.entries(uploaded.id, { cursor, limit: 2 });
      paths.push(...page.entries.map((entry) => entry.path));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(paths).toEqual(['stem-0.wav', 'stem-1.wav', 'stem-2.wav', 'stem-3.wav', 'stem-4.wav']);
  });
});

describe('a server that does not analyse (ANALYSIS_CONCURRENCY=0)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ANALYSIS_CONCURRENCY: '0' });
  });
  afterAll(() => server?.close());

  it('answers peaks with ANALYSIS_PENDING, and waitForAnalysis stops with the signal', async () => {
    const { client, cut } = await clientWithCut(server);
    const uploaded = await client.files.upload({ cutId: cut.id, file: toneWav(1), filename: 'tone.wav' });
    const pending = await client.files.peaks(uploaded.id).catch((error: unknown) => error);
    expect(pending).toBeInstanceOf(BandApiError);
    expect(pending).toMatchObject({ status: 409, code: 'ANALYSIS_PENDING' });
    const stop = new AbortController();
    const reason = new Error('gave up');
    setTimeout(() => stop.abort(reason), 700);
    await expect(client.files.waitForAnalysis(uploaded.id, { signal: stop.signal })).rejects.toMatchObject({ name: 'AbortError', cause: reason });
  });
});
