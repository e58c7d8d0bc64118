import { ERROR_CODES, errorCode, STATUS_BY_CODE } from '@bandcollab/sdk/contract';
import { describe, expect, it } from 'vitest';
import { DomainError, unavailable } from '../../src/core/errors.js';
import { problemHeaders } from '../../src/core/http.js';

describe('STATUS_BY_CODE (the contract\'s one code → status table)', () => {
  it('gives every error code of the contract an error status, and the zod schema knows exactly those codes', () => {
    for (const code of ERROR_CODES) expect(STATUS_BY_CODE[code], code).toSatisfy((status: number) => status >= 400 && status <= 599);
    expect([...errorCode.options].sort()).toEqual(Object.keys(STATUS_BY_CODE).sort());
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
