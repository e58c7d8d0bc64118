import type { ErrorCode, FieldError } from '@bandcollab/sdk/contract';

/**
 * The HTTP status of every error code, as the API defines it: the one place a status is chosen. The error
 * handler (`sendProblem`) answers with it; code that fails names only the code.
 */
export const STATUS_BY_CODE = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  CROSS_PROJECT_MOVE: 400,
  UNAUTHENTICATED: 401,
  TOKEN_EXPIRED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_REFRESH_TOKEN: 401,
  FORBIDDEN: 403,
  PASSWORD_CHANGE_REQUIRED: 403,
  INSUFFICIENT_SCOPE: 403,
  INVITATION_EMAIL_MISMATCH: 403,
  NOT_FOUND: 404,
  IDP_DISABLED: 404,
  EMAIL_TAKEN: 409,
  IDENTITY_IN_USE: 409,
  ALREADY_MEMBER: 409,
  LAST_ADMIN: 409,
  ORDER_CONFLICT: 409,
  NAME_TAKEN: 409,
  ANALYSIS_PENDING: 409,
  OFFSET_MISMATCH: 409,
  UPLOAD_LOCKED: 423,
  CHECKSUM_MISMATCH: 460,
  FILE_TOO_LARGE: 413,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_FILE_TYPE: 415,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  INSUFFICIENT_STORAGE: 507,
  QUOTA_EXCEEDED: 507,
} as const satisfies Record<ErrorCode, number>;

export interface DomainErrorDetails {
  /** Which fields failed and why: only for VALIDATION_FAILED. */
  errors?: FieldError[];
  /** When the client may try again (RATE_LIMITED, UNAVAILABLE); answered as `Retry-After`. */
  retryAfterSeconds?: number;
}

/** A failure the client is told about, by its code; it reaches the client as RFC 9457 problem details. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly details: DomainErrorDetails = {},
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

export const notFound = (what = 'Resource'): DomainError => new DomainError('NOT_FOUND', `${what} not found`);

export const forbidden = (detail = 'You do not have the role this action needs'): DomainError => new DomainError('FORBIDDEN', detail);

export const nameTaken = (detail: string): DomainError => new DomainError('NAME_TAKEN', detail);

export const unauthenticated = (detail = 'Authentication required'): DomainError => new DomainError('UNAUTHENTICATED', detail);

/** The database cannot be reached, or the server is saturated: the client may retry shortly. */
export const unavailable = (detail: string, retryAfterSeconds = 5): DomainError =>
  new DomainError('UNAVAILABLE', detail, { retryAfterSeconds });

export const validationFailed = (errors: FieldError[]): DomainError =>
  new DomainError('VALIDATION_FAILED', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });

export const invalidField = (field: string, message: string): DomainError => validationFailed([{ field, message }]);
