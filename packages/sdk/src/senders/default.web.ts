import { dispatcherOption } from './dispatcher.js';
import { fetchSender } from './fetch.js';
import type { Sender, SenderOptions } from './sender.js';

/** The web build's sender: the runtime's fetch (in the SDK's sdk-fetch tests, Node's, with their dispatcher). */
export function defaultSender(options: SenderOptions): Sender {
  return fetchSender({ credentials: options.credentials, ...dispatcherOption(options) });
}
