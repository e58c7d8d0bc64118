import { expect, it } from 'vitest';
import { addressKey, networkOf } from '../../src/core/networks.js';

it('keys IPv4 by address and its /24, also written IPv4-mapped', () => {
  expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
  expect(networkOf('203.0.113.7')).toBe('203.0.113.0/24');
  expect(addressKey('::ffff:127.0.3.9')).toBe('127.0.3.9');
  expect(networkOf('::ffff:127.0.3.9')).toBe('127.0.3.0/24');
});

it('keys IPv6 by its /64 for both, however it is written', () => {
  for (const spelling of ['2001:db8:1:2::1', '2001:0db8:0001:0002:ffff:0:0:9', '2001:DB8:1:2:a:b:c:d%eth0']) {
    expect(addressKey(spelling)).toBe('2001:db8:1:2::/64');
    expect(networkOf(spelling)).toBe('2001:db8:1:2::/64');
  }
  expect(networkOf('::1')).toBe('0:0:0:0::/64');
  expect(networkOf('fe80::1.2.3.4')).toBe('fe80:0:0:0::/64');
});

it('keeps anything that is not an address as sent', () => {
  expect(addressKey('unknown')).toBe('unknown');
  expect(networkOf('unknown')).toBe('unknown');
});
