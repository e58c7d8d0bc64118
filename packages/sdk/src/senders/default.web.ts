import { fetchSender } from './fetch.js';
import type { Sender, SenderOptions } from './sender.js';

/** The web build's sender: the runtime's fetch. */
export function defaultSender(options: SenderOptions): Sender {
  return fetchSender({ credentials: options.credentials, dispatcher: options.dispatcher });
}
