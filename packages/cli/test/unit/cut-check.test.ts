import type { FileRecord } from '@bandcollab/sdk';
import { expect, it } from 'vitest';
import { checkCut } from '../../src/analysis.js';

const loose = (name: string, sampleRate: number, channels: number, durationMs: number) =>
  ({ name, type: 'CUT', analysis: 'done', stems: null, audio: { codec: 'pcm', sampleRate, bitDepth: 24, channels, durationMs } }) as unknown as FileRecord;

it('band cut check compares loose audio files too: rates and lengths that differ are problems (channels are not)', () => {
  const { problems } = checkCut([loose('drums.wav', 48_000, 2, 25_000), loose('bass.wav', 44_100, 1, 20_000), loose('vox.wav', 48_000, 1, 5_000)]);
  expect(problems).toEqual([
    'sample rates differ: 48 kHz (drums.wav, vox.wav), 44.1 kHz (bass.wav)',
    'lengths differ by 20000 ms (vox.wav is the shortest, drums.wav the longest)',
  ]);
  expect(checkCut([loose('drums.wav', 48_000, 2, 25_000), loose('bass.wav', 48_000, 1, 25_004)]).problems).toEqual([]);
});
