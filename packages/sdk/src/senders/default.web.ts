import type { TransportOptions } from '../transport.js';
import { fetchSender } from './fetch.js';
import type { Sender } from './sender.js';

/** The web build's sender: the runtime's fetch. */
export function defaultSender(options: TransportOptions): Sender {
  return fetchSender({ credentials: options.credentials, dispatcher: options.dispatcher });
}
