// A STEM ZIP for the previews of its entries (PREVIEW_STEMS): a text entry, a directory, a 96 kHz stereo WAV
// (deflated) and a 48 kHz 5.1 WAV (stored), the WAVs written beside it in `dir` (the originals to compare with).
// Shared by the server's tests (./stem-previews.test.ts) and the CLI's.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import yazl from 'yazl';
import { generate } from '../analysis/ffmpeg.js';

/** The ZIP's audio entries, by their index in its entry list (the directory entry is not listed). */
export const AUDIO = [
  { index: 1, path: 'stems/overheads-96k.wav', seconds: 4, channels: 2, options: ['-ar', '96000', '-c:a', 'pcm_s24le'] },
  { index: 2, path: 'stems/room-5.1.wav', seconds: 3, channels: 6, options: ['-ar', '48000', '-channel_layout', '5.1', '-c:a', 'pcm_s24le'] },
] as const;
const TONE = '0.2*sin(2*PI*440*t)';

export async function stemZip(dir: string): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  archive.addBuffer(Buffer.from('tempo 120\n'), 'notes.txt');
  archive.addEmptyDirectory('stems/');
  for (const entry of AUDIO) {
    const file = path.join(dir, path.basename(entry.path));
    generate(`aevalsrc=${Array.from({ length: entry.channels }, () => TONE).join('|')}`, entry.seconds, [...entry.options], file);
    // One entry deflated, one stored: both are read as the ZIP streams them.
    archive.addBuffer(await readFile(file), entry.path, { compress: entry.channels === 2 });
  }
  archive.end();
  const chunks: Buffer[] = [];
  for await (const chunk of archive.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
