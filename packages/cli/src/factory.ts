// The factory seam (gh's cmdutil.Factory): commands get the machine's Io and their SDK clients from a
// Factory, so a test can run a command in-process with clients of its own (clients.ts makes a run's clients).
import type { BandClient, BandClientOptions } from '@bandcollab/sdk';
import type { Io } from './io.js';
import { loadedLibraries } from './libraries.js';

/** What every command group is registered with: the machine band runs on, and how it makes SDK clients. */
export interface Factory {
  readonly io: Io;
  /**
   * A client with the options band chose (server address, user agent, credentials), made once the SDK is
   * loaded. A test may add its own (an undici dispatcher that records or answers requests).
   */
  newClient(options: BandClientOptions): BandClient;
}

/** band's own factory: clients of the SDK as they are. */
export function bandFactory(io: Io): Factory {
  return {
    io,
    newClient: (options) => {
      const libraries = loadedLibraries();
      if (!libraries) throw new Error('the SDK is loaded before a command runs');
      return new libraries.sdk.BandClient(options);
    },
  };
}
