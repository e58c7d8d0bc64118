// Where a webhook may be sent (§19): https only unless WEBHOOKS_ALLOW_HTTP, and only to public unicast
// addresses unless WEBHOOKS_ALLOW_PRIVATE. The addresses are checked after DNS resolution: here when an
// endpoint is created or changed, and by the connecting agent (request-filtering-agent) at every delivery,
// so a name that resolves elsewhere later (DNS rebinding) is refused when it is used.
import { lookup } from 'node:dns/promises';
import type { Agent } from 'node:http';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

export interface TargetRules {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/** Why `url` may not be a webhook's, or null when it may (its host resolved to allowed addresses only). */
export async function refusedTarget(url: string, rules: TargetRules): Promise<string | null> {
  const scheme = schemeRefused(url, rules);
  if (scheme) return scheme;
  if (rules.allowPrivate) return null;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((found) => found.address);
  } catch {
    return `its host ${host} does not resolve`;
  }
  const refused = addresses.find((address) => !isPublic(address));
  return refused ? `its host resolves to ${refused}, not a public address (private, loopback, link-local, multicast or reserved)` : null;
}

/** Why the scheme of `url` is refused, or null. */
export function schemeRefused(url: string, rules: TargetRules): string | null {
  const { protocol } = new URL(url);
  if (protocol === 'https:') return null;
  if (protocol === 'http:' && rules.allowHttp) return null;
  return 'it must be an https:// URL';
}

/** As request-filtering-agent decides: only unicast addresses (an IPv4-mapped IPv6 one as its IPv4). */
function isPublic(address: string): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/** The agents deliveries connect through: refusing private addresses at connect time unless allowed. No keep-alive: every attempt resolves again. */
export function deliveryAgents(rules: TargetRules): { http: Agent; https: Agent } {
  if (rules.allowPrivate) return { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) };
  return {
    http: new RequestFilteringHttpAgent({ keepAlive: false, allowPrivateIPAddress: false }),
    https: new RequestFilteringHttpsAgent({ keepAlive: false, allowPrivateIPAddress: false }),
  };
}
