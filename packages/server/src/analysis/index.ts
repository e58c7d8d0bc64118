export { analyzeAudio, type AudioAnalysis, type AudioFacts } from './analyze.js';
export type { Codec } from './decoders.js';
export type { Loudness } from './loudness.js';
export type { WaveformData } from './peaks.js';
export { analyzeStems, type StemAudio, type StemEntry, type StemsAnalysis, type StemsSummary } from './stems.js';
