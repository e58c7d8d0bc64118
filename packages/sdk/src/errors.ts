import { type ErrorCode, STATUS_BY_CODE } from './contract/error-codes.js';
import type { FieldError, Problem } from './types.js';

/** The server answered with an error (RFC 9457 problem details), or the SDK refused a request the server would refuse. */
export class BandApiError extends Error {
  override readonly name = 'BandApiError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  /** The server's request id, to quote in bug reports; null when the SDK refused the request before sending it. */
  readonly requestId: string | null;
  /** Field errors, present only for VALIDATION_FAILED. */
  readonly errors: FieldError[];
  /** Seconds to wait before trying again (429, 503), when the server said so. */
  readonly retryAfter: number | null;
  readonly problem: Problem;

  constructor(problem: Problem, retryAfter: number | null = null) {
    // The request id in the message too: a log line or bug report that quotes the error finds the server's log line (its `reqId`).
    super(`${problem.detail} (${problem.status} ${problem.code}${problem.requestId ? `, request ${problem.requestId}` : ''})`);
    this.problem = problem;
    this.status = problem.status;
    this.code = problem.code;
    this.detail = problem.detail;
    this.requestId = problem.requestId === '' ? null : problem.requestId;
    this.errors = problem.errors ?? [];
    this.retryAfter = retryAfter;
  }
}

/** The request never got an answer: connection refused or reset, DNS failure, timeout. */
export class BandNetworkError extends Error {
  override readonly name: string = 'BandNetworkError';

  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

/** The connection failed: refused, reset, closed before the answer, or the name did not resolve. */
export class BandConnectionError extends BandNetworkError {
  override readonly name: string = 'BandConnectionError';
}

/** No answer (or no next chunk of it) within the idle timeout (`timeoutMs`). */
export class BandTimeoutError extends BandNetworkError {
  override readonly name: string = 'BandTimeoutError';
}

/**
 * The caller's AbortSignal ended the call (never the idle timeout: that is a BandTimeoutError). Its `cause` is
 * the signal's reason; its name is `AbortError`, as `fetch` names an aborted request, so code written for either
 * recognises it.
 */
export class BandAbortError extends Error {
  override readonly name = 'AbortError';

  constructor(reason: unknown) {
    super('The call was aborted', { cause: reason });
  }
}

/** The error a call surfaces when its signal is aborted: a BandAbortError, whatever the layer below threw. */
export function abortedOr(error: unknown, signal: AbortSignal | undefined): unknown {
  if (!signal?.aborted || error instanceof BandAbortError) return error;
  return new BandAbortError(signal.reason);
}

/** A 401 of any kind: the caller must sign in (again). */
export function isAuthError(error: unknown): error is BandApiError {
  return error instanceof BandApiError && error.status === 401;
}

/**
 * A 507: storing the upload would cross the server's free-disk floor (code INSUFFICIENT_STORAGE: try again
 * later, or tell the server's admin) or the caller's quota (QUOTA_EXCEEDED: delete some uploads first).
 */
export function isStorageFull(error: unknown): error is BandApiError {
  return error instanceof BandApiError && error.status === 507;
}

/**
 * A 412 UNCHANGED: an upload with `ifChanged` whose bytes equal the latest version of its series; nothing was
 * sent. `error.problem.fileId` is that latest version. A CI step reports "unchanged" and succeeds.
 */
export function isUnchanged(error: unknown): error is BandApiError & { problem: { fileId: string } } {
  return error instanceof BandApiError && error.code === 'UNCHANGED';
}

/** An error the SDK raises itself, shaped like the server's answer to the same request: its code's status and that status's title. */
export function localProblem(code: ErrorCode, detail: string): BandApiError {
  const status = STATUS_BY_CODE[code];
  return new BandApiError({ type: 'about:blank', title: statusTitle(status), status, detail, code, requestId: '' });
}

/** The reason phrases of the statuses the API answers with (node:http's STATUS_CODES exists only in Node). */
const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  423: 'Locked',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  507: 'Insufficient Storage',
};

export function statusTitle(status: number): string {
  return STATUS_TITLES[status] ?? 'Error';
}
