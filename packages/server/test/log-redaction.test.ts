/**
 * Logs never hold a secret. The built server logs at `info` while it is sent every kind of secret a
 * request can carry; its whole output is then searched for them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
      // Other spellings name no route (404), and their tokens are no less secret.
      ['GET', `/SHARE/${shareToken}`],
      ['GET', `/Api/Share/${shareToken}/archive/`],
      ['GET', `/%73hare/${shareToken}`],
      ['GET', `/API/INVITATIONS/${inviteToken}`],
      ['GET', `/invite/${inviteToken}`],
      ['GET', `/api/invitations/${inviteToken}`],
      ['GET', `/api/auth/idp/callback?code=${code}&state=${state}`],
      ['GET', `/api/auth/idp?cliRedirect=http://127.0.0.1:9/${code}`],
      ['GET', `/api/projects?${code}`],
      ['GET', '/api/auth/me', { authorization: `Bearer ${user.accessToken}`, cookie: `access_token=${cookie}; refresh_token=${user.refreshToken}` }],
    ];
    for (const [method, path, headers] of requests) await api.request(method, path, { headers });
    await api.request('GET', '/api/health', { headers: { 'x-request-id': marker } });
    await waitForLog(server.output, (line) => line.reqId === marker);

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
        '/SHARE/[redacted]',
        '/api/share/[redacted]',
        '/invite/[redacted]',
        '/api/invitations/[redacted]',
        '/api/auth/idp/callback',
        '/api/auth/me',
      ]),
    );
  });
});
