/**
 * Logs never hold a secret. The built server logs at `info` while it is sent every kind of secret a
 * request can carry; its whole output is then searched for them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../src/core/redact.js';
import { seedProject } from './authz/fixture.js';
import { sampleBytes, upload } from './support/files.js';
import { client } from './support/http.js';
import { type LoggedServer, startLoggedServer } from './support/logged-server.js';
import { logLines, waitForLog } from './support/logs.js';

let server: LoggedServer;

beforeAll(async () => {
  server = await startLoggedServer();
});
afterAll(() => server?.stop());

const secret = () => randomBytes(32).toString('base64url');

describe('the request log', () => {
  it('holds no share or invitation token, query value, bearer token or cookie', async () => {
    const api = client(server.url);
    const user = await api.register();
    const { cutId } = await seedProject(api, user.accessToken);
    const file = (await upload(api, user.accessToken, cutId, 'take.mp3', sampleBytes('mp3', 2048))).body;
    const shareToken = (await api.request('POST', `/api/files/${file.id}/share`, { token: user.accessToken, json: {} })).body.token as string;
    const inviteToken = secret();
    const code = secret();
    const state = secret();
    const cookie = secret();
    const marker = `redaction-${randomUUID()}`;

    const requests: Array<[string, string, Record<string, string>?]> = [
      ['GET', `/share/${shareToken}`],
      ['GET', `/api/share/${shareToken}`, { accept: 'application/json' }],
      ['GET', `/api/share/${shareToken}?download=1`],
      ['GET', `//api//share/${shareToken}`],
      ['GET', `/invite/${inviteToken}`],
      ['GET', `/api/invitations/${inviteToken}`],
      ['GET', `/api/auth/idp/callback?code=${code}&state=${state}`],
      ['GET', `/api/auth/idp?cliRedirect=http://127.0.0.1:9/${code}`],
      ['GET', `/api/projects?${code}`],
      ['GET', '/api/auth/me', { authorization: `Bearer ${user.accessToken}`, cookie: `access_token=${cookie}; refresh_token=${user.refreshToken}` }],
    ];
    for (const [method, path, headers] of requests) await api.request(method, path, { headers });
    await api.request('GET', '/api/health', { headers: { 'x-request-id': marker } });
    await waitForLog(server.output, (line) => line.requestId === marker);

    const output = server.output();
    for (const value of [shareToken, inviteToken, code, state, cookie, user.accessToken, user.refreshToken]) {
      expect(output).not.toContain(value);
    }
    const paths = logLines(output)
      .filter((line) => line.msg === 'request')
      .map((line) => line.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/share/[redacted]',
        '/api/share/[redacted]',
        '/invite/[redacted]',
        '/api/invitations/[redacted]',
        '/api/auth/idp/callback',
        '/api/auth/me',
      ]),
    );
  });
});

describe('redactUrl', () => {
  it('replaces path tokens and every query value, and keeps what names the route', () => {
    expect(redactUrl('/share/abc')).toBe('/share/[redacted]');
    expect(redactUrl('/api/share/abc/files/123?download=1')).toBe('/api/share/[redacted]/files/123?download=[redacted]');
    expect(redactUrl('/invite/abc?x')).toBe('/invite/[redacted]?[redacted]');
    expect(redactUrl('/api/invitations/abc')).toBe('/api/invitations/[redacted]');
    expect(redactUrl('/api/invitations/accept')).toBe('/api/invitations/accept');
    expect(redactUrl('/api/invitations/acceptable')).toBe('/api/invitations/[redacted]');
    expect(redactUrl('/api/auth/idp/callback?code=c&state=s')).toBe('/api/auth/idp/callback?code=[redacted]&state=[redacted]');
    expect(redactUrl('/api/files/123/share')).toBe('/api/files/123/share');
    expect(redactUrl('/api/projects/1/invitations/2')).toBe('/api/projects/1/invitations/2');
  });
});
