import { describe, expect, it } from 'vitest';
import { REDACTED, SECRET_HEADERS, UrlRedactor } from '../../src/core/redact.js';

/** Routes like the server's: `:token` marks a secret segment. */
const urls = new UrlRedactor([
  { method: 'GET', path: '/api/projects/:id' },
  { method: 'GET', path: '/api/files/:id/shares' },
  { method: 'POST', path: '/api/files/:id/share' },
  { method: 'DELETE', path: '/api/projects/:id/invitations/:invitationId' },
  { method: 'GET', path: '/api/share/:token' },
  { method: 'GET', path: '/api/share/:token/files/:fileId' },
  { method: 'GET', path: '/share/:token' },
  { method: 'POST', path: '/api/invitations/accept' },
  { method: 'GET', path: '/api/invitations/:token' },
  { method: 'GET', path: '/invite/:token' },
  { method: 'GET', path: '/api/auth/idp/callback' },
]);

describe('UrlRedactor', () => {
  it('leaves a path without secrets as it is', () => {
    expect(urls.redact('GET', '/api/projects/1')).toBe('/api/projects/1');
    expect(urls.redact('POST', '/api/files/123/share')).toBe('/api/files/123/share');
    expect(urls.redact('DELETE', '/api/projects/1/invitations/2')).toBe('/api/projects/1/invitations/2');
  });

  it('replaces the segment a route declares as :token, however the slashes are spelt', () => {
    expect(urls.redact('GET', '/share/abc123')).toBe(`/share/${REDACTED}`);
    expect(urls.redact('GET', '/api/share/abc123/files/f1')).toBe(`/api/share/${REDACTED}/files/f1`);
    expect(urls.redact('GET', '//api//share//abc123')).toBe(`//api//share//${REDACTED}`);
    expect(urls.redact('GET', '/share/abc123/')).toBe(`/share/${REDACTED}/`);
    expect(urls.redact('GET', '/invite/tok')).toBe(`/invite/${REDACTED}`);
    expect(urls.redact('GET', '/api/invitations/tok')).toBe(`/api/invitations/${REDACTED}`);
  });

  it('redacts a token-shaped run wherever it stands, a UUID never', () => {
    const token = 'Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5';
    const id = '27f3a4df-b72d-409d-aa7c-86557034b570';
    expect(urls.redact('GET', `/nowhere/x/../${token}`)).toBe(`/nowhere/x/../${REDACTED}`);
    expect(urls.redact('POST', `/nowhere/${token};x/more`)).toBe(`/nowhere/${REDACTED};x/more`);
    expect(urls.redact('GET', `/api/projects/${id}`)).toBe(`/api/projects/${id}`);
    expect(urls.redact('GET', `/uploads/files/${id}.mp3`)).toBe(`/uploads/files/${id}.mp3`);
  });

  it('fits the path to the routes in any letter case and percent-encoding (routing answers those 404, the log still gets no token)', () => {
    expect(urls.redact('GET', '/SHARE/abc123')).toBe(`/SHARE/${REDACTED}`);
    expect(urls.redact('GET', '/Api/Share/abc123/FILES/f1')).toBe(`/Api/Share/${REDACTED}/FILES/f1`);
    expect(urls.redact('GET', '/%73hare/abc123')).toBe(`/%73hare/${REDACTED}`);
    expect(urls.redact('GET', '/API/INVITATIONS/tok')).toBe(`/API/INVITATIONS/${REDACTED}`);
  });

  it('redacts the token whatever the method, and whatever follows it', () => {
    expect(urls.redact('POST', '/share/abc123')).toBe(`/share/${REDACTED}`);
    expect(urls.redact('HEAD', '/invite/tok')).toBe(`/invite/${REDACTED}`);
    expect(urls.redact('GET', '/share/abc123/no/such/route')).toBe(`/share/${REDACTED}/no/such/route`);
  });

  it('goes by the route the method and path name: accepting an invitation is an action, no token', () => {
    expect(urls.redact('POST', '/api/invitations/accept')).toBe('/api/invitations/accept');
    expect(urls.redact('POST', '/api/invitations/acceptable')).toBe(`/api/invitations/${REDACTED}`);
    expect(urls.redact('GET', '/api/invitations/accept')).toBe(`/api/invitations/${REDACTED}`);
  });

  it('keeps query parameter names and drops every value, and a bare query entirely', () => {
    expect(urls.redact('GET', '/api/auth/idp/callback?code=secret&state=s')).toBe(`/api/auth/idp/callback?code=${REDACTED}&state=${REDACTED}`);
    expect(urls.redact('GET', '/x?sometoken')).toBe(`/x?${REDACTED}`);
    expect(urls.redact('GET', '/share/t?download=1')).toBe(`/share/${REDACTED}?download=${REDACTED}`);
  });
});

describe('SECRET_HEADERS', () => {
  it('names the credential headers in lower case', () => {
    expect([...SECRET_HEADERS].sort()).toEqual(['authorization', 'cookie', 'proxy-authorization', 'sec-websocket-protocol', 'set-cookie']);
  });
});
