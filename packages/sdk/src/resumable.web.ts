// The web build has no resumable (tus) uploads: a browser upload is one multipart request (swapped in for resumable.ts).
import { ROUTES } from './contract/routes.js';
import type { RequestOptions, Transport } from './transport.js';

export const RESUMABLE_MIN_BYTES = Infinity;

export async function uploadResumable(): Promise<string> {
  throw new TypeError('upload: resumable uploads are not available in the web build');
}

/** Terminates a resumable upload (its URL): the server drops its bytes. */
export async function cancelUpload(transport: Transport, url: string, options: RequestOptions = {}): Promise<void> {
  const path = new URL(url, `${transport.baseUrl}/`).pathname;
  const response = await transport.send({ method: ROUTES.tusTerminate.method, path, headers: { 'tus-resumable': '1.0.0' } }, options);
  await response.body.dump();
}
