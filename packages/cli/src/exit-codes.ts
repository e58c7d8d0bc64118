// The exit codes of `band`, one place for the numbers, their meaning and `band help exit-codes`.

export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  partial: 3,
  auth: 4,
  unavailable: 5,
  notFound: 6,
  checkFailed: 7,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `Exit codes of band:
  0    success
  1    error (the server refused the request, also 507 out of disk space or over your quota, a local file could not be read, ...)
  2    usage: a wrong flag or argument, an ambiguous name, a destructive command without --yes off a terminal, a download onto an existing file without --force
  3    partial failure: some files of a bulk upload or download failed, the others were transferred
  4    not logged in, or authentication failed (wrong password, expired session, a deactivated account)
  5    rate limited, or the server is unavailable or unreachable
  6    not found: a project, vibe, cut, file or member that does not exist (or that you may not see)
  7    a check failed: band cut check found stems that do not line up, band publish found the mix outside
       --max-true-peak / --loudness (the file stays uploaded, not shared), or band review status found the
       version not ready (too few approvals, changes requested, open comments with --no-open-comments)
  130  interrupted (Ctrl-C)
`;

/** An error meant for the user: one line on stderr, then exit with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
    /** The server's request id, printed after the message. */
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

export function notFoundError(message: string): CliError {
  return new CliError(message, EXIT.notFound);
}

/**
 * The exit code for an error's HTTP status: the status the contract gives its code (STATUS_BY_CODE), so a
 * gateway's 502 or 504, which the SDK reports as UNAVAILABLE, is a 503 here.
 */
export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 429 || status === 503) return EXIT.unavailable;
  return EXIT.error;
}
