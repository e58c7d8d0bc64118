import { randomBytes } from 'node:crypto';
import { type Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * A plain TCP connection to a test server, for requests that no HTTP client would send (half-sent, trickled, reset).
 * `localAddress` speaks from another client address: on Linux all of 127.0.0.0/8 is loopback.
 */
export function openSocket(baseUrl: string, localAddress?: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ...(localAddress === undefined ? {} : { localAddress }) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves once the server has closed the connection, with everything it sent before. */
export function whenClosed(socket: Socket): Promise<string> {
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    if (socket.destroyed) resolve(received);
    else socket.once('close', () => resolve(received));
  });
}

/** The head of a request, ready to write on a raw socket. */
export function requestHead(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries({ Host: 'localhost', ...headers }).map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** A multipart upload body split around its file bytes, so a test can send them at its own pace. */
export function multipartUpload(fields: Record<string, string>, fileName: string, fileSize: number) {
  const boundary = `----raw${randomBytes(8).toString('hex')}`;
  const head =
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: Buffer.byteLength(head) + fileSize + Buffer.byteLength(tail),
    head,
    tail,
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RawAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/**
 * The answers a raw socket receives, parsed as they arrive (each with a Content-Length, as the server's are):
 * `next()` resolves with the next complete one, so a test can go on sending after it, on the same connection.
 */
export function answersOn(socket: Socket): { next(): Promise<RawAnswer> } {
  let buffered = '';
  const complete: RawAnswer[] = [];
  const waiting: Array<{ resolve: (answer: RawAnswer) => void; reject: (error: Error) => void }> = [];
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    for (;;) {
      const headEnd = buffered.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const [statusLine, ...lines] = buffered.slice(0, headEnd).split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? 0);
      if (buffered.length < headEnd + 4 + length) return;
      const answer = { status: Number(statusLine!.split(' ')[1]), headers, body: buffered.slice(headEnd + 4, headEnd + 4 + length) };
      buffered = buffered.slice(headEnd + 4 + length);
      const waiter = waiting.shift();
      if (waiter) waiter.resolve(answer);
      else complete.push(answer);
    }
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    for (const waiter of waiting.splice(0)) waiter.reject(new Error('the connection closed before the answer'));
  });
  return {
    next: () => {
      const answer = complete.shift();
      if (answer) return Promise.resolve(answer);
      if (socket.destroyed) return Promise.reject(new Error('the connection closed before the answer'));
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
  };
}

/**
 * One request with its path sent exactly as given (fetch resolves dot segments, `%2e` included, before sending),
 * through `agent` (keep-alive, so a sweep of thousands does not open as many connections).
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  { headers = {}, body, agent }: { headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port: Number(port), method, path, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () =>
        resolve({
          status: response.statusCode!,
          headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.once('error', reject);
    });
    request.once('error', reject);
    request.end(body);
  });
}
