import { isIPv4, isIPv6 } from 'node:net';

// How a client address is keyed. One host controls far more than one address: an IPv6 host gets a whole /64
// (and picks a new address in it at will), a flood of IPv4 addresses usually comes from neighbouring ones.
// Limits that count what one client did key by `addressKey`; shares that must stay fair between networks (the
// password-hashing queue) and the trust a recent sign-in gives key by `networkOf`.

/** How long a network an account signed in from vouches for its logins there (auth; the purge keeps them as long). */
export const SIGN_IN_NETWORK_DAYS = 30;

/** An IPv4 address as itself, an IPv6 address as its /64 (`2001:db8:1:2::/64`); anything else as sent. */
export function addressKey(address: string): string {
  const ipv4 = ipv4Of(address);
  if (ipv4 !== null) return ipv4;
  const groups = ipv6Groups(address);
  return groups === null ? address : ipv6Prefix64(groups);
}

/** The address's network: `203.0.113.0/24` for IPv4, `2001:db8:1:2::/64` for IPv6; anything else as sent. */
export function networkOf(address: string): string {
  const ipv4 = ipv4Of(address);
  if (ipv4 !== null) return `${ipv4.split('.').slice(0, 3).join('.')}.0/24`;
  const groups = ipv6Groups(address);
  return groups === null ? address : ipv6Prefix64(groups);
}

/** Dotted IPv4, also when written as an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, what a dual-stack socket reports). */
function ipv4Of(address: string): string | null {
  if (isIPv4(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped && isIPv4(mapped[1]!) ? mapped[1]! : null;
}

/** The eight 16-bit groups of an IPv6 address (a zone such as `%eth0` dropped), or null for anything else. */
function ipv6Groups(address: string): number[] | null {
  const bare = address.replace(/%.*$/, '');
  if (!isIPv6(bare)) return null;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const parse = (part: string | undefined): number[] => {
    if (!part) return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [parseInt(group, 16)];
      const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const first = parse(head);
  const last = parse(tail);
  return tail === undefined ? first : [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

const ipv6Prefix64 = (groups: number[]): string => `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
