import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandClient } from '../src/index.js';
import { PASSWORD, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const PNG = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(64, 7)]);

describe('auth: the caller\'s account', () => {
  it('updateMe renames, setAvatar and removeAvatar set and clear the avatar, each answering the me record', async () => {
    const { client, user } = await registeredClient(server.url);
    expect(await client.auth.updateMe({ name: 'Bassist' }, { headers: { 'x-request-id': 'sdk-rename' } })).toMatchObject({ id: user.id, name: 'Bassist' });
    const withAvatar = await client.auth.setAvatar(PNG);
    expect(withAvatar.avatarUrl).toMatch(/^\/uploads\/avatars\/[0-9a-f-]{36}\.png$/);
    expect((await client.auth.me()).avatarUrl).toBe(withAvatar.avatarUrl);
    expect((await client.auth.removeAvatar()).avatarUrl).toBeNull();
  });

  it('changePassword keeps this client signed in and ends the other sessions', async () => {
    const { client, email } = await registeredClient(server.url);
    const other = new BandClient({ baseUrl: server.url });
    await other.auth.login({ email, password: PASSWORD });
    expect(await client.auth.changePassword({ currentPassword: PASSWORD, newPassword: 'another long password' })).toEqual({ ok: true, revokedTokens: 0, tokens: [] });
    expect((await client.auth.me()).email).toBe(email);
    const ended = await other.auth.me().catch((error: unknown) => error);
    expect(ended).toMatchObject({ status: 401 });
  });

  it('deleteAccount deletes the account and forgets the tokens', async () => {
    const { client, user } = await registeredClient(server.url);
    expect(await client.auth.deleteAccount({ password: PASSWORD })).toEqual({ id: user.id, deleted: true });
    expect(client.sessionTokens).toEqual({ accessToken: undefined, refreshToken: undefined });
    const login = new BandClient({ baseUrl: server.url });
    const refused = await login.auth.login({ email: user.email, password: PASSWORD }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 401, code: 'INVALID_CREDENTIALS' });
  });
});
