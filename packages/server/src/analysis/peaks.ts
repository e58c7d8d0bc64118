// The waveform: min/max pairs over all channels, in the waveform-data format version 2 that peaks.js and
// wavesurfer.js read. The length is not known while streaming, so the reducer starts at one sample per
// pixel and halves its resolution (merging neighbour pairs) whenever it holds 2 * MAX_POINTS pairs; at the
// end it halves until at most MAX_POINTS remain, which leaves between 1000 and 2000 for any file longer
// than 1000 samples, in bounded memory.

export const MAX_POINTS = 2000;

export interface WaveformData {
  version: 2;
  channels: 1;
  sample_rate: number;
  samples_per_pixel: number;
  bits: 8;
  length: number;
  data: number[];
}

export class PeakReducer {
  private mins = new Float32Array(MAX_POINTS * 2);
  private maxs = new Float32Array(MAX_POINTS * 2);
  private length = 0;
  private samplesPerPixel = 1;
  /** Samples already counted into the pixel at `length` (the open one). */
  private fill = 0;

  constructor(private readonly sampleRate: number) {}

  add(channelData: readonly Float32Array[]): void {
    const frames = channelData[0]?.length ?? 0;
    let offset = 0;
    while (offset < frames) {
      if (this.fill === 0) {
        if (this.length === this.mins.length) this.halve();
        this.mins[this.length] = Infinity;
        this.maxs[this.length] = -Infinity;
      }
      const count = Math.min(frames - offset, this.samplesPerPixel - this.fill);
      let min = this.mins[this.length]!;
      let max = this.maxs[this.length]!;
      for (const samples of channelData) {
        for (let i = offset; i < offset + count; i += 1) {
          const value = samples[i]!;
          if (value < min) min = value;
          if (value > max) max = value;
        }
      }
      this.mins[this.length] = min;
      this.maxs[this.length] = max;
      offset += count;
      this.fill += count;
      if (this.fill === this.samplesPerPixel) {
        this.fill = 0;
        this.length += 1;
      }
    }
  }

  private halve(): void {
    const pairs = Math.ceil(this.length / 2);
    for (let i = 0; i < pairs; i += 1) {
      const second = Math.min(2 * i + 1, this.length - 1);
      this.mins[i] = Math.min(this.mins[2 * i]!, this.mins[second]!);
      this.maxs[i] = Math.max(this.maxs[2 * i]!, this.maxs[second]!);
    }
    this.length = pairs;
    this.samplesPerPixel *= 2;
  }

  result(): WaveformData {
    if (this.fill > 0) {
      // The open pixel is partial: close it, and a later halving then merges it like any other.
      this.length += 1;
      this.fill = 0;
    }
    while (this.length > MAX_POINTS) this.halve();
    const data: number[] = [];
    for (let i = 0; i < this.length; i += 1) data.push(toByte(this.mins[i]!), toByte(this.maxs[i]!));
    return {
      version: 2,
      channels: 1,
      sample_rate: this.sampleRate,
      samples_per_pixel: this.samplesPerPixel,
      bits: 8,
      length: this.length,
      data,
    };
  }
}

function toByte(sample: number): number {
  return Math.max(-128, Math.min(127, Math.round(sample * 128)));
}
