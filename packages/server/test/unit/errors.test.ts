import { errorCode } from '@bandcollab/sdk/contract';
import { describe, expect, it } from 'vitest';
import { DomainError, STATUS_BY_CODE, unavailable } from '../../src/core/errors.js';
import { problemHeaders } from '../../src/core/http.js';

describe('STATUS_BY_CODE (the one code → status table)', () => {
  it('gives every error code of the contract a status, and knows no other code', () => {
    const codes = errorCode.options;
    for (const code of codes) expect(STATUS_BY_CODE[code], code).toBeGreaterThanOrEqual(400);
    expect(Object.keys(STATUS_BY_CODE).sort()).toEqual([...codes].sort());
  });

  it('answers the statuses the API defines for its codes', () => {
    expect(STATUS_BY_CODE).toMatchObject({
      VALIDATION_FAILED: 400,
      INVALID_JSON: 400,
      CROSS_PROJECT_MOVE: 400,
      UNAUTHENTICATED: 401,
      TOKEN_EXPIRED: 401,
      INVALID_CREDENTIALS: 401,
      INVALID_REFRESH_TOKEN: 401,
      FORBIDDEN: 403,
      INVITATION_EMAIL_MISMATCH: 403,
      NOT_FOUND: 404,
      IDP_DISABLED: 404,
      EMAIL_TAKEN: 409,
      IDENTITY_IN_USE: 409,
      ALREADY_MEMBER: 409,
      LAST_ADMIN: 409,
      ORDER_CONFLICT: 409,
      NAME_TAKEN: 409,
      FILE_TOO_LARGE: 413,
      PAYLOAD_TOO_LARGE: 413,
      UNSUPPORTED_FILE_TYPE: 415,
      UNSUPPORTED_MEDIA_TYPE: 415,
      RATE_LIMITED: 429,
      INTERNAL: 500,
      UNAVAILABLE: 503,
      INSUFFICIENT_STORAGE: 507,
      QUOTA_EXCEEDED: 507,
    });
  });
});

describe('problemHeaders (what an error implies on the wire)', () => {
  it('names the Bearer scheme on every 401, and says an expired token is the reason on TOKEN_EXPIRED', () => {
    expect(problemHeaders(new DomainError('INVALID_CREDENTIALS', 'wrong'))).toEqual({ 'WWW-Authenticate': 'Bearer' });
    expect(problemHeaders(new DomainError('TOKEN_EXPIRED', 'expired'))).toEqual({
      'WWW-Authenticate': 'Bearer error="invalid_token", error_description="expired"',
    });
    expect(problemHeaders(new DomainError('FORBIDDEN', 'no'))).toEqual({});
  });

  it('turns a known wait into Retry-After, in seconds', () => {
    expect(problemHeaders(new DomainError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 42 }))).toEqual({ 'Retry-After': '42' });
    expect(problemHeaders(unavailable('busy', 1))).toEqual({ 'Retry-After': '1' });
  });
});
