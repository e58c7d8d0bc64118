import { request as httpRequest } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { FileRecord } from '@bandcollab/sdk';
import { type Api, seedProject } from '../authz/fixture.js';

/** The leading bytes the server expects of each accepted extension. */
const SIGNATURES: Record<string, Buffer> = {
  mp3: Buffer.from('ID3\x04\x00\x00', 'latin1'),
  wav: Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'),
  aif: Buffer.from('FORM\x00\x00\x00\x24AIFFCOMM', 'latin1'),
  aiff: Buffer.from('FORM\x00\x00\x00\x24AIFCFVER', 'latin1'),
  ogg: Buffer.from('OggS\x00\x02', 'latin1'),
  flac: Buffer.from('fLaC\x00\x00\x00\x22', 'latin1'),
  aac: Buffer.from([0xff, 0xf1, 0x50, 0x80]),
  m4a: Buffer.from('\x00\x00\x00\x20ftypM4A ', 'latin1'),
  zip: Buffer.from('PK\x03\x04\x14\x00', 'latin1'),
  jpg: Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xdb]),
  png: Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
  gif: Buffer.from('GIF89a', 'latin1'),
  webp: Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1'),
};

/** `size` bytes that start like a real file of that extension (the rest is a pattern). */
export function sampleBytes(extension: string, size = 1024): Buffer {
  const signature = SIGNATURES[extension.toLowerCase()];
  if (!signature) throw new Error(`no sample for .${extension}`);
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
  signature.copy(bytes, 0, 0, Math.min(size, signature.length));
  return bytes;
}

/** A real PCM WAV: `seconds` of a 440 Hz tone, mono, 16-bit, 8 kHz. */
export function toneWav(seconds: number): Buffer {
  const rate = 8000;
  const samples = Math.round(seconds * rate);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return wav;
}

/** A fresh user owning a project with one vibe and one cut, all made through the API. */
export async function userWithCut(api: Api) {
  const user = await api.register();
  const project = await seedProject(api, user.accessToken);
  return { user, token: user.accessToken, projectId: project.id, vibeId: project.vibeId, cutId: project.cutId };
}

export interface UploadPart {
  name: string;
  value: string | Buffer;
  fileName?: string;
}

/** POSTs a multipart form with the parts in the given order (fetch's FormData keeps it). */
export function uploadForm(api: Api, token: string | undefined, parts: UploadPart[]) {
  const form = new FormData();
  for (const part of parts) {
    if (typeof part.value === 'string' && part.fileName === undefined) form.append(part.name, part.value);
    else form.append(part.name, new Blob([typeof part.value === 'string' ? part.value : new Uint8Array(part.value)]), part.fileName ?? 'file');
  }
  return api.request('POST', '/api/files/upload', { token, body: form });
}

/** The usual upload: cutId, then the file. */
export function upload(api: Api, token: string, cutId: string, fileName: string, bytes: Buffer, name?: string) {
  const parts: UploadPart[] = [{ name: 'cutId', value: cutId }];
  if (name !== undefined) parts.push({ name: 'name', value: name });
  parts.push({ name: 'file', value: bytes, fileName });
  return uploadForm(api, token, parts);
}

/** A hand-written multipart body around one file, for uploads sent with node:http in pieces. */
export function multipartPieces(cutId: string, fileName: string) {
  const boundary = `----bandcollab${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="cutId"\r\n\r\n${cutId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, head, tail };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Starts an upload with node:http and hands the open request to `drive`, which writes (and may stall or
 * abort); resolves with the response when one arrives, or null when the connection ends without one.
 */
export function rawUpload(
  baseUrl: string,
  token: string,
  headers: Record<string, string | number>,
  drive: (request: ReturnType<typeof httpRequest>) => void,
): Promise<RawResponse | null> {
  return new Promise((resolve) => {
    const request = httpRequest(`${baseUrl}/api/files/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, ...headers },
    });
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', () => resolve(null));
    drive(request);
  });
}

/** Polls the file until its analysis is no longer pending (its file.analyzed event would need an event socket open before the upload). */
export async function analysed(api: Api, token: string, id: string, timeoutMs = 60_000): Promise<FileRecord> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const response = await api.request<FileRecord>('GET', `/api/files/${id}`, { token });
    if (response.status !== 200) throw new Error(`GET /api/files/${id}: ${response.status}`);
    if (response.body.analysis !== 'pending') return response.body;
    if (Date.now() > until) throw new Error(`file ${id} still pending after ${timeoutMs} ms`);
    await delay(20);
  }
}

/** Polls the file until its preview is no longer pending. */
export async function previewed(api: Api, token: string, id: string, timeoutMs = 90_000): Promise<FileRecord> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api.request<FileRecord>('GET', `/api/files/${id}`, { token });
    if (body.preview.status !== 'pending') return body;
    if (Date.now() > until) throw new Error(`file ${id}'s preview still pending after ${timeoutMs} ms`);
    await delay(50);
  }
}
