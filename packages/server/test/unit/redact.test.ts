import { describe, expect, it } from 'vitest';
import { REDACTED, redactUrl, SECRET_HEADERS } from '../../src/core/redact.js';

describe('redactUrl', () => {
  it('leaves a path without secrets as it is', () => {
    expect(redactUrl('/api/projects/1/vibes')).toBe('/api/projects/1/vibes');
  });

  it('replaces the token of share and invitation paths, however the slashes are spelt', () => {
    expect(redactUrl('/share/abc123')).toBe(`/share/${REDACTED}`);
    expect(redactUrl('/api/share/abc123/download')).toBe(`/api/share/${REDACTED}/download`);
    expect(redactUrl('//api//share//abc123')).toBe(`//api//share//${REDACTED}`);
    expect(redactUrl('/invite/tok')).toBe(`/invite/${REDACTED}`);
    expect(redactUrl('/api/invitations/tok')).toBe(`/api/invitations/${REDACTED}`);
  });

  it('keeps the accept action of invitations, which is no token', () => {
    expect(redactUrl('/api/invitations/accept')).toBe('/api/invitations/accept');
    expect(redactUrl('/api/invitations/acceptable')).toBe(`/api/invitations/${REDACTED}`);
  });

  it('keeps query parameter names and drops every value, and a bare query entirely', () => {
    expect(redactUrl('/api/auth/idp/callback?code=secret&state=s')).toBe(`/api/auth/idp/callback?code=${REDACTED}&state=${REDACTED}`);
    expect(redactUrl('/x?sometoken')).toBe(`/x?${REDACTED}`);
    expect(redactUrl('/share/t?download=1')).toBe(`/share/${REDACTED}?download=${REDACTED}`);
  });
});

describe('SECRET_HEADERS', () => {
  it('names the credential headers in lower case', () => {
    expect([...SECRET_HEADERS].sort()).toEqual(['authorization', 'cookie', 'proxy-authorization', 'set-cookie']);
  });
});
