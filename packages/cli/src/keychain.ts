// The OS keychain band uses (the platform's store through @napi-rs/keyring), driven in a child process
// (keychain-worker.ts says why). The child never keeps band running: each call's own timer does, until the
// keychain answers or KEYCHAIN_TIMEOUT_MS passes; then the child is killed and the call rejects.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { KeychainCall, KeychainReply, KeychainRequest } from './keychain-worker.js';

/** The part of the OS keychain band uses: one secret per service and account. */
export interface Keychain {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
}

/** A keychain that does not answer within this is given up on (gh waits as long). */
const KEYCHAIN_TIMEOUT_MS = 3000;

type Settle = { resolve(value: string | boolean | null): void; reject(error: Error): void };

/** Starts the keychain process; rejects when @napi-rs/keyring cannot load there (not installed, no binary). */
export async function openSystemKeychain(): Promise<Keychain> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./keychain-worker.js', import.meta.url))], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  const pending = new Map<number, Settle>();
  let nextId = 0;
  let gone: Error | undefined;
  let loaded: Settle | undefined;
  const ready = new Promise<unknown>((resolve, reject) => (loaded = { resolve, reject }));
  child.on('message', (reply: KeychainReply | 'ready') => {
    if (reply === 'ready') return loaded?.resolve(null);
    const call = pending.get(reply.id);
    pending.delete(reply.id);
    if ('error' in reply) call?.reject(new Error(reply.error));
    else call?.resolve(reply.value);
  });
  const end = (error: Error) => {
    gone ??= error;
    loaded?.reject(error);
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  };
  child.on('error', end);
  child.on('exit', () => end(new Error('the keychain process ended')));
  child.unref();
  child.channel?.unref();

  const withDeadline = <T>(promise: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the OS keychain did not answer within ${KEYCHAIN_TIMEOUT_MS / 1000} s`));
      }, KEYCHAIN_TIMEOUT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };
  const send = (call: KeychainCall) =>
    withDeadline(
      new Promise<string | boolean | null>((resolve, reject) => {
        if (gone) return reject(gone);
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ ...call, id } satisfies KeychainRequest);
      }),
    );

  await withDeadline(ready);
  return {
    getPassword: async (service, account) => (await send({ op: 'get', service, account })) as string | null,
    setPassword: async (service, account, password) => void (await send({ op: 'set', service, account, password })),
    deletePassword: async (service, account) => (await send({ op: 'delete', service, account })) as boolean,
  };
}
