import type { Dispatcher } from 'undici';

// The Node build's choice of what carries the requests (the web build's sibling has none: fetch sends).

export interface DispatcherOption {
  /** Node build: an undici dispatcher (Agent, ProxyAgent, MockAgent…); the global one by default. */
  dispatcher?: Dispatcher;
}

/** The dispatcher of a client's options, alone. */
export function dispatcherOption(options: DispatcherOption): DispatcherOption {
  return { dispatcher: options.dispatcher };
}
