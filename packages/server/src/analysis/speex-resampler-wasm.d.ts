// The package ships an Emscripten module without types: the part of it ./resample.ts calls.
declare module '@echogarden/speex-resampler-wasm/simd' {
  export interface SpeexModule {
    HEAPF32: Float32Array;
    HEAP32: Int32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
    _speex_resampler_skip_zeros(state: number): number;
    _speex_resampler_get_input_latency(state: number): number;
    _speex_resampler_process_interleaved_float(state: number, input: number, inputFramesPointer: number, output: number, outputFramesPointer: number): number;
    _speex_resampler_destroy(state: number): void;
  }
  const load: () => Promise<SpeexModule>;
  export default load;
}
