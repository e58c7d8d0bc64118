// What a preview is checked against (§20), by ffmpeg/ffprobe as the independent reader: the encoder's tests
// (./encode.test.ts) and the previews of STEM entries (./stem-previews.test.ts) share them.
import { execFileSync } from 'node:child_process';
import { open } from 'node:fs/promises';

/** ffprobe's view of a file: its container and first stream. */
export function probe(file: string): { format: { format_name: string; tags?: { major_brand?: string } }; stream: { codec_name: string; profile: string; sample_rate: string; channels: number; duration: string } } {
  const probed = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file], { encoding: 'utf8' })) as {
    streams: { codec_name: string; profile: string; sample_rate: string; channels: number; duration: string }[];
    format: { format_name: string; tags?: { major_brand?: string } };
  };
  return { format: probed.format, stream: probed.streams[0]! };
}

/** The top-level boxes of an MP4, in order. */
export async function topLevelBoxes(file: string): Promise<string[]> {
  const handle = await open(file, 'r');
  const types: string[] = [];
  try {
    const header = Buffer.alloc(16);
    for (let at = 0; ; ) {
      const { bytesRead } = await handle.read(header, 0, 16, at);
      if (bytesRead < 8) break;
      let size = header.readUInt32BE(0);
      if (size === 1) size = Number(header.readBigUInt64BE(8));
      types.push(header.toString('latin1', 4, 8));
      if (size < 8) break;
      at += size;
    }
  } finally {
    await handle.close();
  }
  return types;
}

/** Seconds to the first sample whose magnitude reaches a quarter of the file's peak, as ffmpeg decodes it (mono mix). */
export function onsetSeconds(file: string): number {
  const raw = execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-ac', '1', '-ar', '48000', '-f', 'f32le', '-'], { maxBuffer: 256 * 1024 * 1024 });
  const samples = new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
  let peak = 0;
  for (const sample of samples) peak = Math.max(peak, Math.abs(sample));
  const at = samples.findIndex((sample) => Math.abs(sample) >= peak / 4);
  return at / 48000;
}

export function durationSeconds(file: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim());
}

/** The original as a stereo listener hears it: more than two channels downmixed by BS.775 in ffmpeg, the oracle. */
export function referenceFor(file: string, channels: number): string {
  if (channels <= 2) return file;
  const out = `${file}.bs775.wav`;
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', file, '-af', 'pan=stereo|FL=FL+0.7071*FC+0.7071*BL|FR=FR+0.7071*FC+0.7071*BR', '-c:a', 'pcm_f32le', out]);
  return out;
}
