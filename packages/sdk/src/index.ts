// The Node build: the web build's exports (web.ts; its modules resolve here to the Node ones, not their `.web.ts`
// swaps) and these.
export * from './web.js';
export { BandAbortError } from './errors.js';
export { BandPromise, type RawResponse, type WithResponse } from './band-promise.js';
export { FileResumeStore, RESUMABLE_MIN_BYTES } from './resumable.js';
