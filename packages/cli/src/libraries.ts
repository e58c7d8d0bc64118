// The SDK (undici, form-data) is most of the CLI's code: it is loaded when a command runs, not when its group
// is registered, so `--help` and usage errors do not pay for it.

export interface Libraries {
  sdk: typeof import('@bandcollab/sdk');
}
let libraries: Libraries | undefined;

export async function loadLibraries(): Promise<Libraries> {
  libraries = { sdk: await import('@bandcollab/sdk') };
  return libraries;
}

/** The libraries, when a command has loaded them. */
export function loadedLibraries(): Libraries | undefined {
  return libraries;
}
