// The OS keychain's calls, run in a process of their own (started by keychain.ts, answering over its IPC
// channel). @napi-rs/keyring connects to D-Bus and the Secret Service synchronously when an entry is made: a
// session bus or keyring daemon that takes the connection and never answers blocks the thread making it for
// ever, where no timer fires, and a blocked worker thread would even keep band from exiting. A process can be
// killed: band gives up on it after its timeout.
import { Entry } from '@napi-rs/keyring';

export type KeychainCall =
  | { op: 'get'; service: string; account: string }
  | { op: 'set'; service: string; account: string; password: string }
  | { op: 'delete'; service: string; account: string };

export type KeychainRequest = KeychainCall & { id: number };

export type KeychainReply = { id: number; value: string | boolean | null } | { id: number; error: string };

const send = (message: KeychainReply | 'ready') => process.send!(message);

process.on('message', (request: KeychainRequest) => {
  try {
    // On Linux the keyring falls back to the kernel's keyring when no Secret Service answers; that one is
    // emptied at logout or reboot, so a login kept there would vanish. Only the Secret Service counts as a
    // keychain: without it band keeps its own 0600 file, and says so.
    const entry = new Entry(request.service, request.account, { linux: { store: 'secret-service' } });
    const value =
      request.op === 'get' ? entry.getPassword() : request.op === 'set' ? (entry.setPassword(request.password), null) : entry.deletePassword();
    send({ id: request.id, value });
  } catch (error) {
    send({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
// band is done with the keychain (or gone).
process.on('disconnect', () => process.exit(0));
// Loaded: the module and its binary are there (a failed load ends this process before it says so).
send('ready');
