import { randomUUID } from 'node:crypto';
import { Agent, type Dispatcher } from 'undici';
import { BandClient, type BandClientOptions } from '../src/index.js';

export { startTestServer, type TestServer } from '../../server/test/support/server.js';

export const PASSWORD = 'correct horse battery';

/** A client with a freshly registered account. */
export async function registeredClient(baseUrl: string, options: Partial<BandClientOptions> = {}) {
  const client = new BandClient({ baseUrl, ...options });
  const email = `sdk-${randomUUID()}@example.com`;
  // The registration hashes the password at its real cost: a client's short timeout (a test of timeouts) is not
  // for it, or a loaded machine fails the setup instead of the test.
  const result = await client.auth.register({ email, password: PASSWORD, name: `User ${email.slice(4, 10)}` }, { timeoutMs: 30_000 });
  return { client, user: result.user, email };
}

/** A real undici Agent that records the method and path of every request it sends. */
export function recordingDispatcher(): { dispatcher: Dispatcher; requests: string[] } {
  const requests: string[] = [];
  const dispatcher = new Agent().compose((dispatch) => (options, handler) => {
    requests.push(`${options.method} ${options.path}`);
    return dispatch(options, handler);
  });
  return { dispatcher, requests };
}

/** A real undici Agent that records the status of every answer it receives, with the request's method and path. */
export function answerRecordingDispatcher(): { dispatcher: Dispatcher; answers: { status: number; request: string }[] } {
  const answers: { status: number; request: string }[] = [];
  const dispatcher = new Agent().compose((dispatch) => (options, handler) =>
    dispatch(options, {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, status, headers, socket) => handler.onRequestUpgrade?.(controller, status, headers, socket),
      onResponseStart: (controller, status, headers, statusMessage) => {
        answers.push({ status, request: `${options.method} ${options.path}` });
        return handler.onResponseStart?.(controller, status, headers, statusMessage);
      },
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    }),
  );
  return { dispatcher, answers };
}

/** Waits until `check` holds, polling; for effects the server completes after answering. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
