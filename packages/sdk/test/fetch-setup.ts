import { fetch } from 'undici';

// The sdk-fetch project (vitest.config.ts): the SDK's fetch sender on the fetch of the undici the tests' recording
// dispatchers come from. Node's global fetch is an older undici whose dispatch calls those dispatchers refuse.
globalThis.fetch = fetch as unknown as typeof globalThis.fetch;
