// The error codes of the API (§1) and the HTTP status of each: the one place a code's status is stated. The
// server answers with it, the SDK raises its own errors with it, and the CLI chooses its exit code from it.
// Plain data, no zod, so the SDK's main entry can use it without loading the schema library.

export const STATUS_BY_CODE = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  CROSS_PROJECT_MOVE: 400,
  UNAUTHENTICATED: 401,
  TOKEN_EXPIRED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_REFRESH_TOKEN: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  NOT_FOUND: 404,
  IDP_DISABLED: 404,
  EMAIL_TAKEN: 409,
  IDENTITY_IN_USE: 409,
  ALREADY_MEMBER: 409,
  INVITATION_EMAIL_MISMATCH: 403,
  LAST_ADMIN: 409,
  ORDER_CONFLICT: 409,
  NAME_TAKEN: 409,
  PATH_TAKEN: 409,
  OFFSET_MISMATCH: 409,
  UNCHANGED: 412,
  UPLOAD_LOCKED: 423,
  CHECKSUM_MISMATCH: 460,
  FILE_TOO_LARGE: 413,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_FILE_TYPE: 415,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INSUFFICIENT_STORAGE: 507,
  QUOTA_EXCEEDED: 507,
  RATE_LIMITED: 429,
  PASSWORD_CHANGE_REQUIRED: 403,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  ANALYSIS_PENDING: 409,
  PREVIEW_NOT_READY: 409,
  DOWNLOAD_DISABLED: 403,
  IDEMPOTENCY_CONFLICT: 409,
  JOB_NOT_FAILED: 409,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

/** Every error code, in the order the API reference lists them. */
export const ERROR_CODES = Object.keys(STATUS_BY_CODE) as [ErrorCode, ...ErrorCode[]];
