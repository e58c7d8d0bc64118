import 'reflect-metadata';
import { container as rootContainer } from 'tsyringe';
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { CLOCK, CONFIG, SIGNING_SECRET } from '../../src/core/di.js';
import { AccessTokens } from '../../src/core/tokens.js';
import { TestClock } from '../support/server.js';

// The verified-token cache of core/tokens.ts is bounded in memory: one per server, and no entry kept past
// its token's expiry.

function serverContainer(clock = new TestClock()) {
  const container = rootContainer.createChildContainer();
  container.register(CONFIG, { useValue: loadConfig({ JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789' }) });
  container.register(SIGNING_SECRET, { useValue: 'test-secret-test-secret-test-secret-0123456789' });
  container.register(CLOCK, { useValue: clock });
  return container;
}

it('is one per server: the guard of every route group resolves the same one', () => {
  const container = serverContainer();
  expect(container.resolve(AccessTokens)).toBe(container.resolve(AccessTokens));
});

it('forgets verified tokens once they have expired', () => {
  const clock = new TestClock();
  const tokens = serverContainer(clock).resolve(AccessTokens);
  for (let i = 0; i < 50; i++) tokens.verify(tokens.sign({ sub: `user-${i}`, sid: `session-${i}` }));
  expect(tokens.verifiedCount).toBe(50);

  clock.advance(tokens.ttlSeconds + 1);
  tokens.verify(tokens.sign({ sub: 'user-late', sid: 'session-late' }));
  expect(tokens.verifiedCount).toBe(1);
});

it('forgets an expired token it is shown again', () => {
  const clock = new TestClock();
  const tokens = serverContainer(clock).resolve(AccessTokens);
  const token = tokens.sign({ sub: 'user', sid: 'session' });
  tokens.verify(token);
  clock.advance(tokens.ttlSeconds + 1);
  expect(() => tokens.verify(token)).toThrow(/expired/);
  expect(tokens.verifiedCount).toBe(0);
  expect(tokens.verify(token, { ignoreExpiration: true })).toEqual({ sub: 'user', sid: 'session' });
  expect(tokens.verifiedCount).toBe(0);
});
