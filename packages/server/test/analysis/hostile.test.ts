// Files crafted against the analysis queue: none may stop the server's answers, hold the queue, or keep
// a job retrying forever.
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { FileRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../authz/fixture.js';
import { analysed, toneWav, upload, userWithCut } from '../support/files.js';
import { client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { flacBomb, zipBuffer } from './bombs.js';
import { generate, hasFfmpeg } from './ffmpeg.js';

/** Waits until an instance runs the file's job. */
async function analysing(server: TestServer, fileId: string): Promise<void> {
  const until = Date.now() + 30_000;
  while ((await server.sql`select 1 from jobs where kind = 'analysis' and payload->>'fileId' = ${fileId} and state = 'running'`).length === 0) {
    if (Date.now() > until) throw new Error('no worker took the job');
    await delay(20);
  }
}

describe.skipIf(!hasFfmpeg)('hostile files in the analysis queue', () => {
  let server: TestServer;
  let api: Api;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  beforeAll(async () => {
    // The default budget: the first analysis of a server pays the thread's start at nice 19, which a loaded CI
    // machine stretched past a 5 s cap (the test failed there).
    server = await startTestServer();
    api = client(server.url);
    owner = await userWithCut(api);
  });
  afterAll(() => server?.close());

  it('analyses a STEM ZIP whose entry name holds a NUL (stored as U+FFFD), and the file queued after it', async () => {
    const wav = path.join(os.tmpdir(), `nul-stem-${process.pid}.wav`);
    generate('anoisesrc=color=pink:amplitude=0.2:sample_rate=48000', 1, ['-c:a', 'pcm_s16le'], wav);
    const zip = await zipBuffer({ 'drums\0.wav': await readFile(wav), 'notes\0.txt': Buffer.from('tempo 120\n') });
    await rm(wav);
    const stems = await upload(api, owner.token, owner.cutId, 'stems.zip', zip);
    expect(stems.status).toBe(201);
    const next = await upload(api, owner.token, owner.cutId, 'next.wav', toneWav(1));
    expect(next.status).toBe(201);

    expect(await analysed(api, owner.token, next.body.id, 20_000)).toMatchObject({ analysis: 'done', audio: { durationMs: 1000 } });
    const record = await analysed(api, owner.token, stems.body.id);
    expect(record.analysis).toBe('done');
    expect(record.stems!.entries.map((entry) => entry.path).sort()).toEqual(['drums\uFFFD.wav', 'notes\uFFFD.txt']);
    expect(record.stems!.entries.find((entry) => entry.path === 'drums\uFFFD.wav')!.audio).toMatchObject({ sampleRate: 48000 });
  });

});

describe.skipIf(!hasFfmpeg)('the time budget', () => {
  it('fails a FLAC bomb of unknown length long before its time budget (more samples per byte than any codec)', async () => {
    // The default budget: before, this file held its analysis slot for the 600 s budget (issue 46).
    const server = await startTestServer();
    try {
      const api = client(server.url);
      const owner = await userWithCut(api);
      // 35 KB announcing no length and decoding to 8 channels of 23 minutes: minutes of work without the rule.
      const bomb = await upload(api, owner.token, owner.cutId, 'bomb.flac', flacBomb(1000, 0));
      expect(bomb.status).toBe(201);
      const next = await upload(api, owner.token, owner.cutId, 'after-bomb.wav', toneWav(1));
      expect(await analysed(api, owner.token, bomb.body.id, 30_000)).toMatchObject({ analysis: 'failed', audio: null });
      expect(await analysed(api, owner.token, next.body.id, 30_000)).toMatchObject({ analysis: 'done' });
    } finally {
      await server.close();
    }
  });

  it('keeps answering while a long file is analysed, and fails it when its budget (ANALYSIS_TIMEOUT_SECONDS, 1) ends', async () => {
    const server = await startTestServer({ ANALYSIS_TIMEOUT_SECONDS: '1' });
    const file = path.join(os.tmpdir(), `budget-${process.pid}.flac`);
    try {
      const api = client(server.url);
      const owner = await userWithCut(api);
      // Seconds of decoding (pink noise compresses badly): longer than one second on any machine here.
      generate('anoisesrc=color=pink:amplitude=0.25:sample_rate=48000', 300, ['-c:a', 'flac', '-ac', '2'], file);
      const long = await upload(api, owner.token, owner.cutId, 'long.flac', await readFile(file));
      expect(long.status).toBe(201);
      await analysing(server, long.body.id);
      for (let i = 0; i < 20; i += 1) expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
      expect(await analysed(api, owner.token, long.body.id, 20_000)).toMatchObject({ analysis: 'failed', audio: null });
    } finally {
      await rm(file, { force: true });
      await server.close();
    }
  });
});

describe.skipIf(!hasFfmpeg)('attempts at a job', () => {
  let server: TestServer;
  let api: Api;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    owner = await userWithCut(api);
    // The database refuses a named file's result: with a data exception (22023), or with an I/O error (58030)
    // as a failing disk would. Failing only the `done` write leaves room to mark the file failed.
    await server.sql.unsafe(`
      create function refuse_result() returns trigger language plpgsql as $$
      begin
        if new.analysis = 'done' and new.name like 'refused%' then raise exception 'refused' using errcode = '22023'; end if;
        if new.analysis = 'done' and new.name like 'flaky%' then raise exception 'disk trouble' using errcode = '58030'; end if;
        return new;
      end $$;
      create trigger refuse_result before update on files for each row execute function refuse_result();`);
  });
  afterAll(() => server?.close());

  /** Waits until the file's job has failed `count` times and waits for its next attempt. */
  async function attempts(fileId: string, count: number): Promise<void> {
    const until = Date.now() + 30_000;
    while ((await server.sql`select 1 from jobs where kind = 'analysis' and payload->>'fileId' = ${fileId} and state = 'queued' and attempts = ${count}`).length === 0) {
      if (Date.now() > until) throw new Error(`the job never reached ${count} attempts`);
      await delay(50);
    }
  }

  it('fails the file at once when the database refuses its result, and the queue moves on', async () => {
    const refused = await upload(api, owner.token, owner.cutId, 'refused.wav', toneWav(1));
    const next = await upload(api, owner.token, owner.cutId, 'next.wav', toneWav(1));
    expect(await analysed(api, owner.token, refused.body.id, 20_000)).toMatchObject({ analysis: 'failed', audio: null });
    expect(await analysed(api, owner.token, next.body.id, 20_000)).toMatchObject({ analysis: 'done' });
  });

  it('tries a job that fails otherwise three times, later each time and out of the way of the others, then fails its file', async () => {
    const flaky = await upload(api, owner.token, owner.cutId, 'flaky.wav', toneWav(1));
    await attempts(flaky.body.id, 1);
    // Waiting for its retry, the job lets the next one through.
    const next = await upload(api, owner.token, owner.cutId, 'next.wav', toneWav(1));
    expect(await analysed(api, owner.token, next.body.id, 20_000)).toMatchObject({ analysis: 'done' });
    expect((await api.request<FileRecord>('GET', `/api/files/${flaky.body.id}`, { token: owner.token })).body.analysis).toBe('pending');

    server.clock.advance(30);
    await attempts(flaky.body.id, 2);
    server.clock.advance(30);
    expect(await analysed(api, owner.token, flaky.body.id, 20_000)).toMatchObject({ analysis: 'failed', audio: null });
    expect(await server.sql`select id from jobs where kind = 'analysis' and payload->>'fileId' = ${flaky.body.id} and state in ('queued', 'running')`).toEqual([]);
  });
});
