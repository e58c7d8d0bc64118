import type { FileRecord } from '@bandcollab/sdk';
import { expect, it } from 'vitest';
import { stemsVerdict } from '../../src/views/files.js';

const zip = (audioCount: number, entryCount: number, consistent: boolean) =>
  ({ stems: { entries: [], summary: { audioCount, entryCount, consistent } } }) as unknown as FileRecord;

it('band cut check counts stems in good English: "1 stem lines up", "2 stems line up"', () => {
  expect(stemsVerdict(zip(1, 1, true))).toBe('1 stem lines up: one sample rate, one bit depth, one length');
  expect(stemsVerdict(zip(2, 3, true))).toBe('2 stems line up: one sample rate, one bit depth, one length');
  expect(stemsVerdict(zip(1, 1, false))).toBe('1 stem of 1 entry does not line up');
  expect(stemsVerdict(zip(4, 4, false))).toBe('4 stems of 4 entries do not line up');
});
