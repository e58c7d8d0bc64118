// The web build has no dispatcher to give: the runtime's fetch sends (swapped in for dispatcher.ts).

export interface DispatcherOption {}

export function dispatcherOption(_options: DispatcherOption): DispatcherOption {
  return {};
}
