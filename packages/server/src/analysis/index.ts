// The audio analysis engine: pure functions over a file, no database, no HTTP.
//
// Decisions:
// - Headers of STEM entries: music-metadata 12; WAV headers by our own reader
//   (./wav.ts) so a stem and a decoded cut name the same codec and bit depth.
// - Decoders, all wasm/JS from npm (no system binaries), each fed the file chunk by chunk: the
//   wasm-audio-decoders family (@wasm-audio-decoders/flac 0.2.11, mpg123-decoder 1.0.3,
//   @wasm-audio-decoders/ogg-vorbis 0.1.20, ogg-opus-decoder 1.7.5) and @audio/decode-aac 1.6.0 (FAAD2 in
//   wasm for AAC in ADTS or M4A, Apple's ALAC decoder ported to JS). No npm WAV decoder streams, so WAV is
//   decoded here. AAC is thus measured like every other codec, ALAC included.
// - The loudness meter and the peak reducer are ours (./loudness.ts, ./peaks.ts): no maintained package
//   streams all three figures with 4x true peak. They are tested against EBU Tech 3341/3342 signals and
//   against ffmpeg's ebur128 filter.
// - ZIPs: yauzl 3.4.0 (reads the central directory, streams each entry).
export { analyzeAudio, type AudioAnalysis, type AudioFacts } from './analyze.js';
export type { Codec } from './decoded.js';
export type { Loudness } from './loudness.js';
export type { WaveformData } from './peaks.js';
export { analyzeStems, type StemAudio, type StemEntry, type StemsAnalysis, type StemsSummary } from './stems.js';
