import net from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventSocket, openEventSocket, refusedUpgrade } from './support/event-socket.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

const APP_ORIGIN = 'https://app.example.com';

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer({ CORS_ORIGINS: APP_ORIGIN });
  api = client(server.url);
});
afterAll(() => server?.close());

describe('opening GET /api/events', () => {
  it('says hello with the user id and no projects to a new user authenticated by Bearer', async () => {
    const user = await api.register();
    const events = await openEventSocket(server.url, { token: user.accessToken });
    expect(events.hello).toEqual({ type: 'hello', userId: user.user.id, projectIds: [] });
    expect(events.requestId).toMatch(/^[0-9a-f-]{36}$/);
    events.close();
  });

  it('accepts the access_token cookie', async () => {
    const user = await api.register();
    const events = await openEventSocket(server.url, { cookie: `access_token=${user.accessToken}` });
    expect(events.hello.userId).toBe(user.user.id);
    events.close();
  });

  it('refuses a missing or tampered token with 401 problem details', async () => {
    const user = await api.register();
    for (const token of [undefined, `${user.accessToken}x`]) {
      const refusal = await refusedUpgrade(server.url, { token });
      expect(refusal.status).toBe(401);
      expect(refusal.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      expect(refusal.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refusal.headers['www-authenticate']).toBe('Bearer');
      expect(refusal.headers['x-request-id']).toBe(refusal.body.requestId);
    }
  });

  it('takes the token as the bandcollab.bearer subprotocol (browsers set no headers) and selects bandcollab.v1', async () => {
    const user = await api.register();
    const bearer = (token: string) => ['bandcollab.v1', `bandcollab.bearer.${Buffer.from(token).toString('base64url')}`];
    const events = await openEventSocket(server.url, { protocols: bearer(user.accessToken), origin: APP_ORIGIN });
    expect(events.hello.userId).toBe(user.user.id);
    expect(events.socket.protocol).toBe('bandcollab.v1');
    events.close();
    const refusal = await refusedUpgrade(server.url, { protocols: bearer(`${user.accessToken}x`), origin: APP_ORIGIN });
    expect(refusal.status).toBe(401);
  });

  it('refuses the token of a logged-out session', async () => {
    const user = await api.register();
    expect((await api.request('POST', '/api/auth/logout', { token: user.accessToken })).status).toBe(200);
    const refusal = await refusedUpgrade(server.url, { token: user.accessToken });
    expect(refusal.status).toBe(401);
  });

  it("accepts the server's own origin and CORS_ORIGINS, refuses any other with 403", async () => {
    const user = await api.register();
    for (const origin of [new URL(server.config.publicUrl).origin, APP_ORIGIN]) {
      const events = await openEventSocket(server.url, { cookie: `access_token=${user.accessToken}`, origin });
      events.close();
    }
    for (const origin of ['https://evil.example.com', 'null', `${APP_ORIGIN}:8443`]) {
      const refusal = await refusedUpgrade(server.url, { cookie: `access_token=${user.accessToken}`, origin });
      expect(refusal.status).toBe(403);
      expect(refusal.body.code).toBe('FORBIDDEN');
    }
  });

  it('answers an upgrade of another path with 404', async () => {
    const user = await api.register();
    const refusal = await refusedUpgrade(server.url, { token: user.accessToken }, '/api/projects');
    expect(refusal.status).toBe(404);
  });
});

describe('peers that vanish mid-handshake', () => {
  it('leave the server running', async () => {
    const user = await api.register();
    const { port } = new URL(server.url);
    const request = [
      'GET /api/events HTTP/1.1',
      'Host: localhost',
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      `Authorization: Bearer ${user.accessToken}`,
      '',
      '',
    ].join('\r\n');
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const socket = net.connect(Number(port), '127.0.0.1');
        socket.on('error', () => undefined);
        socket.once('connect', () => {
          socket.write(request);
          setTimeout(() => socket.resetAndDestroy(), i % 4);
        });
        return new Promise((resolve) => socket.once('close', resolve));
      }),
    );
    const events = await openEventSocket(server.url, { token: user.accessToken });
    expect(events.hello.userId).toBe(user.user.id);
    events.close();
  });
});

describe('shutting down', () => {
  it('closes open sockets with 1001 and finishes', async () => {
    const own = await startTestServer();
    const user = await client(own.url).register();
    const events = await openEventSocket(own.url, { token: user.accessToken });
    await own.close();
    expect((await events.closed).code).toBe(1001);
  });
});

describe('ending a session', () => {
  it('closes the sockets of a logged-out session with 4401 and leaves the other sessions open', async () => {
    const user = await api.register();
    const login = await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password } });
    const loggedOut = await openEventSocket(server.url, { token: user.accessToken });
    const otherSession = await openEventSocket(server.url, { token: login.body.accessToken });

    await api.request('POST', '/api/auth/logout', { json: { refreshToken: user.refreshToken } });

    expect(await loggedOut.closed).toEqual({ code: 4401, reason: 'The session has ended' });
    // Both sockets' fates were decided by the same notice: a pong after it proves the other one stays open.
    await new Promise((resolve) => {
      otherSession.socket.once('pong', resolve);
      otherSession.socket.ping();
    });
    expect(otherSession.socket.readyState).toBe(WebSocket.OPEN);
    otherSession.close();
  });

  it('closes the sockets of a session revoked because its rotated refresh token came back', async () => {
    const user = await api.register();
    const events = await openEventSocket(server.url, { token: user.accessToken });
    expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } })).status).toBe(200);
    expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } })).status).toBe(401);
    expect((await events.closed).code).toBe(4401);
  });
});

describe('limits', () => {
  it('closes a socket whose client sends a message with 1008: the stream takes none', async () => {
    const user = await api.register();
    const events = await openEventSocket(server.url, { token: user.accessToken });
    events.socket.send(JSON.stringify({ type: 'subscribe', projectId: 'all' }));
    expect((await events.closed).code).toBe(1008);
  });

  it('refuses the 17th socket of one session and the 33rd of one user with 429 RATE_LIMITED', async () => {
    const user = await api.register();
    const loginAgain = async () =>
      (await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password } })).body.accessToken as string;
    const [second, third] = [await loginAgain(), await loginAgain()];
    const open: EventSocket[] = [];
    const expectRefused = async (token: string) => {
      const refusal = await refusedUpgrade(server.url, { token });
      expect(refusal.status).toBe(429);
      expect(refusal.body.code).toBe('RATE_LIMITED');
      expect(Number(refusal.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    };
    try {
      for (let i = 0; i < 16; i++) open.push(await openEventSocket(server.url, { token: user.accessToken }));
      await expectRefused(user.accessToken);
      for (let i = 0; i < 16; i++) open.push(await openEventSocket(server.url, { token: second }));
      await expectRefused(third);
      // The sockets already open are untouched by the refusals.
      expect(open.every((events) => events.socket.readyState === WebSocket.OPEN)).toBe(true);
    } finally {
      for (const events of open) events.close();
    }
  });
});
