// What the user gets of a failure: anything a command throws becomes one line and an exit code.
import { CliError, EXIT, exitCodeForStatus } from './exit-codes.js';
import { loadedLibraries } from './factory.js';

/** Turns anything thrown by a command into the one line and exit code the user gets. */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  // Without the SDK loaded, no SDK error can have been thrown.
  const { BandApiError, BandNetworkError, STATUS_BY_CODE } = loadedLibraries()?.sdk ?? {};
  if (BandApiError && error instanceof BandApiError) {
    // The server's detail of a validation failure usually is its field messages already: each is said once.
    const fields = error.errors
      .map((field) => `${field.field}: ${field.message}`)
      .filter((text) => !error.detail.includes(text))
      .join('; ');
    const wait = error.retryAfter ? ` (retry after ${error.retryAfter} s)` : '';
    // A code this CLI does not know yet (a newer server's) has no entry: its answer's status stands.
    return new CliError(`${error.detail}${fields ? ` (${fields})` : ''}${wait}`, exitCodeForStatus(STATUS_BY_CODE![error.code] ?? error.status), error.requestId ?? undefined);
  }
  if (BandNetworkError && error instanceof BandNetworkError) return new CliError(error.message, EXIT.unavailable);
  if (error instanceof Error && error.name === 'AbortError') return new CliError('interrupted', EXIT.interrupted);
  return new CliError(error instanceof Error ? error.message : String(error), EXIT.error);
}
