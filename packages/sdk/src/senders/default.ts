import { nodeHttpSender } from './node-http.js';
import type { OutgoingBody, Sender, SenderOptions } from './sender.js';
import { undiciSender } from './undici.js';

/**
 * The Node build's sender. Uploads go through undici (loaded by the first one): it streams a request body as it
 * is read. Everything else goes through node:http, so a command that sends one small request loads neither
 * undici nor the copy inside Node that its `fetch` runs on. A caller's dispatcher is undici's: then undici sends
 * everything. (The web build, and the SDK's sdk-fetch test project, use senders/default.web.ts.)
 */
export function defaultSender(options: SenderOptions): Sender {
  const undici = undiciSender(options.dispatcher);
  if (options.dispatcher) return undici;
  const small = nodeHttpSender();
  return (request) => (streamed(request.body) ? undici(request) : small(request));
}

function streamed(body: OutgoingBody | undefined): boolean {
  return body !== undefined && typeof body !== 'string';
}
