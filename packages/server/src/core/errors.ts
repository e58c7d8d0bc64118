import type { ErrorCode, FieldError } from '@bandcollab/sdk';

/** An error that reaches the client as RFC 9457 problem details. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

export const notFound = (what = 'Resource'): ApiError => new ApiError(404, 'NOT_FOUND', `${what} not found`);

export const forbidden = (detail = 'You do not have the role this action needs'): ApiError =>
  new ApiError(403, 'FORBIDDEN', detail);

export const nameTaken = (detail: string): ApiError => new ApiError(409, 'NAME_TAKEN', detail);

export const unauthenticated = (detail = 'Authentication required'): ApiError =>
  new ApiError(401, 'UNAUTHENTICATED', detail);

/** The database cannot be reached, or the server is saturated: the client may retry shortly. */
export const unavailable = (detail: string, retryAfterSeconds = 5): ApiError =>
  new ApiError(503, 'UNAVAILABLE', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });

export const validationFailed = (errors: FieldError[]): ApiError =>
  new ApiError(400, 'VALIDATION_FAILED', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });

export const invalidField = (field: string, message: string): ApiError => validationFailed([{ field, message }]);
