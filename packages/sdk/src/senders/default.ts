import type { TransportOptions } from '../transport.js';
import type { Sender } from './sender.js';
import { undiciSender } from './undici.js';

/** The Node build's sender: undici (the web build, and the SDK's fetch test project, use senders/default.web.ts). */
export function defaultSender(options: TransportOptions): Sender {
  return undiciSender(options.dispatcher);
}
