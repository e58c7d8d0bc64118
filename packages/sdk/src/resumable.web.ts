// The web build has no resumable (tus) uploads: a browser upload is one multipart request (swapped in for resumable.ts).
import { ROUTES } from './contract/routes.js';
import type { RequestOptions, Transport } from './transport.js';

/** The web build has no options for resumable uploads (the Node build's ResumableOptions). */
export interface ResumableOptions {}

/** Every upload is one multipart request. */
export function protocolFor(_source: unknown, _options: ResumableOptions): 'form' | 'tus' {
  return 'form';
}

/** Never called: `protocolFor` never answers 'tus' here. */
export async function sendResumable(_transport: Transport, _upload: unknown, _options?: RequestOptions): Promise<never> {
  throw new TypeError('no resumable uploads here');
}

/** Terminates a resumable upload (its URL): the server drops its bytes. */
export async function cancelUpload(transport: Transport, url: string, options: RequestOptions = {}): Promise<void> {
  const path = new URL(url, `${transport.baseUrl}/`).pathname;
  const response = await transport.send({ method: ROUTES.tusTerminate.method, path, headers: { 'tus-resumable': '1.0.0' } }, options);
  await response.body.dump();
}
