import type { ErrorCode, FieldError } from '@bandcollab/sdk/contract';

export interface DomainErrorDetails {
  /** Which fields failed and why: only for VALIDATION_FAILED. */
  errors?: FieldError[];
  /** When the client may try again (RATE_LIMITED, UNAVAILABLE); answered as `Retry-After`. */
  retryAfterSeconds?: number;
  /** UNCHANGED: the latest version the upload matched; PATH_TAKEN: the latest version at the path. Answered as the problem's `fileId`. */
  fileId?: string;
}

/**
 * A failure the client is told about, by its code; it reaches the client as RFC 9457 problem details, with the
 * status the contract gives its code (STATUS_BY_CODE).
 */
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

/**
 * A site ADMIN deactivated the account: its right password is refused with FORBIDDEN (the contract's code for
 * a caller who may not), which the identity provider's flow tells apart by this class.
 */
export class AccountDeactivated extends DomainError {
  constructor() {
    super('FORBIDDEN', 'This account is deactivated; a site administrator can activate it again');
  }
}

/** A share link whose file or cut is in the trash (§21): it works again if that is restored. */
export const gone = (detail: string): DomainError => new DomainError('GONE', detail);

export const nameTaken = (detail: string): DomainError => new DomainError('NAME_TAKEN', detail);

export const unauthenticated = (detail = 'Authentication required'): DomainError => new DomainError('UNAUTHENTICATED', detail);

/** The database cannot be reached, or the server is saturated: the client may retry shortly. */
export const unavailable = (detail: string, retryAfterSeconds = 5): DomainError =>
  new DomainError('UNAVAILABLE', detail, { retryAfterSeconds });

export const validationFailed = (errors: FieldError[]): DomainError =>
  new DomainError('VALIDATION_FAILED', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });

export const invalidField = (field: string, message: string): DomainError => validationFailed([{ field, message }]);
