// What the user gets of a failure: anything a command throws becomes one line and an exit code.
import { CliError, EXIT, exitCodeForStatus } from './exit-codes.js';
import { loadedLibraries } from './libraries.js';

/** Failures to connect at all: nothing listens there, no such host, no route to it, no answer in time. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);
/** TLS spoken to a server that answers in plain http. */
const PLAIN_HTTP_CODES = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'EPROTO']);

/**
 * The one sentence for a request that never reached the server at `apiUrl` (a network error of the SDK), or
 * undefined for any other failure.
 */
export function unreachableServer(error: unknown, apiUrl: string): CliError | undefined {
  const { BandNetworkError } = loadedLibraries()?.sdk ?? {};
  if (!BandNetworkError || !(error instanceof BandNetworkError)) return undefined;
  const codes = causeCodes(error.cause);
  if (apiUrl.startsWith('https:') && codes.some((code) => PLAIN_HTTP_CODES.has(code))) {
    return new CliError(`${apiUrl} answers in plain http, not https: use ${apiUrl.replace(/^https:/, 'http:')}`, EXIT.unavailable);
  }
  if (codes.some((code) => UNREACHABLE_CODES.has(code))) {
    return new CliError(`cannot reach ${apiUrl}: nothing answers there (is the server running? --api-url or BAND_API_URL name another)`, EXIT.unavailable);
  }
  return undefined;
}

/** The error codes of a failure and of what caused it (a connection tried on several addresses fails with all of theirs). */
function causeCodes(cause: unknown): string[] {
  if (!(cause instanceof Error)) return [];
  const code = (cause as NodeJS.ErrnoException).code;
  const inner = cause instanceof AggregateError ? cause.errors.flatMap(causeCodes) : [];
  return [...(code ? [code] : []), ...inner, ...causeCodes(cause.cause)];
}

/**
 * A login the server refused with 403 (the account is deactivated, which the detail says) is an authentication
 * failure: exit 4, as a wrong password, so a script tells "cannot sign in" from "not allowed to do this".
 */
export function signInFailure(error: unknown): CliError {
  const failure = toCliError(error);
  const { BandApiError } = loadedLibraries()?.sdk ?? {};
  if (BandApiError && error instanceof BandApiError && error.status === 403) return new CliError(failure.message, EXIT.auth, failure.requestId);
  return failure;
}

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
