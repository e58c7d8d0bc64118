import { fetchSender } from './fetch.js';
import type { OutgoingBody, Sender, SenderOptions } from './sender.js';
import { undiciSender } from './undici.js';

/**
 * The Node build's sender. Uploads go through undici (loaded by the first one): Node's fetch keeps a whole
 * streamed request body in memory. Everything else goes through Node's own fetch, so a command that sends one
 * small request does not load undici at all. A caller's dispatcher is undici's: then undici sends everything.
 * (The web build, and the SDK's sdk-fetch test project, use senders/default.web.ts.)
 */
export function defaultSender(options: SenderOptions): Sender {
  const undici = undiciSender(options.dispatcher);
  if (options.dispatcher) return undici;
  const fetch = fetchSender({ redirect: 'manual' });
  return (request) => (streamed(request.body) ? undici(request) : fetch(request));
}

function streamed(body: OutgoingBody | undefined): boolean {
  return body !== undefined && typeof body !== 'string';
}
