/**
 * Upload admission is written once (files/admission.ts): the multipart upload and the tus creation both go
 * through it, neither holds a limit or quota check of its own, and the same upload is refused alike over both
 * protocols — same status, same code — whichever rule refuses it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ROUTES, takesIdempotencyKey } from '@bandcollab/sdk/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './authz/fixture.js';
import { sampleBytes, upload, uploadForm, userWithCut } from './support/files.js';
import { client, type TestResponse } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { TUS } from './support/tus.js';

const source = (file: string) => readFileSync(fileURLToPath(new URL(`../src/${file}`, import.meta.url)), 'utf8');

/**
 * What deciding an upload's admission looks like: the quota and floor (Space), a type's limit, typing by name,
 * versionOf and If-None-Match, the session path. The modules of the two protocols may only ask the admission.
 */
const ADMISSION_RULES = /\bSpace\b|this\.space\b|maxBytes|fileTooLarge|unsupportedType|sessionRule|extensionOf|versionTarget|checkVersion|checkKeptPath|seriesAtPath|matchesEntityTag|checkFilePath|reserveBody|checkRoom|access\.require\(principal, 'cut', (cutId|early)/;
const PROTOCOL_MODULES = ['files/routes.ts', 'core/multipart.ts', 'uploads/service.ts', 'uploads/routes.ts', 'images/forms.ts'];

describe('one admission for both protocols (source)', () => {
  it('the multipart route and the tus creation both ask UploadAdmission', () => {
    expect(source('files/routes.ts')).toMatch(/this\.admission\.form\(principal/);
    expect(source('uploads/service.ts')).toMatch(/this\.admission\.announced\(principal, request\)/);
  });

  it('both take an Idempotency-Key, honoured by core/routes.ts before either handler runs', () => {
    expect([takesIdempotencyKey(ROUTES.uploadFile), takesIdempotencyKey(ROUTES.tusCreate)]).toEqual([true, true]);
  });

  it.each(PROTOCOL_MODULES)('%s holds no admission rule of its own', (file) => {
    const lines = source(file)
      .split('\n')
      .flatMap((line, index) => (ADMISSION_RULES.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : []));
    expect(lines).toEqual([]);
  });
});

const MiB = 1024 * 1024;
const CUT_LIMIT = 64 * 1024;

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  // Deletes go to the trash (the default retention), so a trashed cut is one that still exists, unseen.
  server = await startTestServer({ USER_QUOTA_MB: '1', MAX_AUDIO_BYTES: String(CUT_LIMIT) });
  api = client(server.url);
});
afterAll(() => server?.close());

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A tus creation announcing `bytes` (no body), with `extra` headers beside the protocol's. */
function tusCreate(token: string, fields: Record<string, string>, length: number, extra: Record<string, string> = {}) {
  const metadata = Object.entries(fields)
    .map(([key, value]) => `${key} ${b64(value)}`)
    .join(',');
  return api.request('POST', '/api/uploads', { token, headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': metadata, ...extra } });
}

/** The same file over tus: the creation, then its bytes in one PATCH when the creation was admitted. */
async function tusUpload(token: string, fields: Record<string, string>, bytes: Buffer, extra: Record<string, string> = {}): Promise<TestResponse> {
  const created = await tusCreate(token, fields, bytes.length, extra);
  if (created.status !== 201) return created;
  return api.request('PATCH', created.headers.get('location')!, {
    token,
    body: new Uint8Array(bytes),
    headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
  });
}

/** The same file over multipart: the fields before the file part, as the SDK sends them. */
function formUpload(token: string, fields: Record<string, string>, fileName: string, bytes: Buffer, headers: Record<string, string> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(bytes)]), fileName);
  return api.request('POST', '/api/files/upload', { token, body: form, headers });
}

const refusal = (response: TestResponse) => ({ status: response.status, code: response.body?.code as string | undefined });

/** Refused over both protocols with `status` and `code`, and nothing recorded by either. */
async function refusedAlike(
  token: string,
  fields: Record<string, string>,
  fileName: string,
  bytes: Buffer,
  expected: { status: number; code: string },
  headers: Record<string, string> = {},
): Promise<void> {
  const filesBefore = await server.sql`select id from public.files order by id`;
  const multipart = refusal(await formUpload(token, fields, fileName, bytes, headers));
  const tus = refusal(await tusUpload(token, { ...fields, filename: fileName }, bytes, headers));
  expect({ multipart, tus }).toEqual({ multipart: expected, tus: expected });
  expect(await server.sql`select id from public.files order by id`).toEqual(filesBefore);
}

describe('the same upload refused alike over multipart and tus', () => {
  it('by extension: 415 UNSUPPORTED_FILE_TYPE', async () => {
    const owner = await userWithCut(api);
    await refusedAlike(owner.token, { cutId: owner.cutId }, 'notes.txt', Buffer.from('not audio'), { status: 415, code: 'UNSUPPORTED_FILE_TYPE' });
  });

  it('by content, a renamed file whose leading bytes are not its extension\'s: 415 UNSUPPORTED_FILE_TYPE', async () => {
    const owner = await userWithCut(api);
    const text = Buffer.from('These are the lyrics of the song, not audio at all.\n'.repeat(20));
    await refusedAlike(owner.token, { cutId: owner.cutId }, 'lyrics.wav', text, { status: 415, code: 'UNSUPPORTED_FILE_TYPE' });
  });

  it("over its type's limit: 413 FILE_TOO_LARGE", async () => {
    const owner = await userWithCut(api);
    await refusedAlike(owner.token, { cutId: owner.cutId }, 'long.wav', sampleBytes('wav', CUT_LIMIT + 1), { status: 413, code: 'FILE_TOO_LARGE' });
  });

  it('over the quota: 507 QUOTA_EXCEEDED', async () => {
    const owner = await userWithCut(api);
    await expectStatus(upload(api, owner.token, owner.cutId, 'stems.zip', sampleBytes('zip', 700 * 1024)), 201);
    await refusedAlike(owner.token, { cutId: owner.cutId }, 'more.zip', sampleBytes('zip', 400 * 1024), { status: 507, code: 'QUOTA_EXCEEDED' });
  });

  it('into a cut in the trash, or of a project in the trash: 404 NOT_FOUND', async () => {
    const owner = await userWithCut(api);
    await expectStatus(api.request('DELETE', `/api/cuts/${owner.cutId}`, { token: owner.token }), 200);
    await refusedAlike(owner.token, { cutId: owner.cutId }, 'take.wav', sampleBytes('wav', 1000), { status: 404, code: 'NOT_FOUND' });
    const other = await userWithCut(api);
    await expectStatus(api.request('DELETE', `/api/projects/${other.projectId}`, { token: other.token }), 200);
    await refusedAlike(other.token, { cutId: other.cutId }, 'take.wav', sampleBytes('wav', 1000), { status: 404, code: 'NOT_FOUND' });
  });

  it('into a cut of a project the caller is no member of: 404 NOT_FOUND', async () => {
    const owner = await userWithCut(api);
    const stranger = await api.register();
    await refusedAlike(stranger.accessToken, { cutId: owner.cutId }, 'take.wav', sampleBytes('wav', 1000), { status: 404, code: 'NOT_FOUND' });
  });

  it('as a version of a file of another type: 400 VALIDATION_FAILED naming versionOf', async () => {
    const owner = await userWithCut(api);
    const first = await expectStatus(upload(api, owner.token, owner.cutId, 'stems.zip', sampleBytes('zip', 1000)), 201);
    await refusedAlike(owner.token, { versionOf: first.id }, 'take.wav', sampleBytes('wav', 1000), { status: 400, code: 'VALIDATION_FAILED' });
  });

  it('as an unchanged version (If-None-Match the latest sha256): 412 UNCHANGED', async () => {
    const owner = await userWithCut(api);
    const bytes = sampleBytes('wav', 1000);
    const first = await expectStatus(upload(api, owner.token, owner.cutId, 'take.wav', bytes), 201);
    await refusedAlike(owner.token, { versionOf: first.id }, 'take.wav', bytes, { status: 412, code: 'UNCHANGED' }, { 'if-none-match': `"${first.sha256}"` });
  });

  it('at a path another series holds: 409 PATH_TAKEN', async () => {
    const owner = await userWithCut(api);
    await expectStatus(uploadForm(api, owner.token, [{ name: 'cutId', value: owner.cutId }, { name: 'path', value: 'Audio/take.wav' }, { name: 'file', value: sampleBytes('wav', 1000), fileName: 'take.wav' }]), 201);
    await refusedAlike(owner.token, { cutId: owner.cutId, path: 'audio/TAKE.wav' }, 'take.wav', sampleBytes('wav', 1000), { status: 409, code: 'PATH_TAKEN' });
  });

  it('and admitted alike: the same file lands over both, counted against the same quota', async () => {
    const owner = await userWithCut(api);
    const bytes = sampleBytes('wav', 1000);
    expect((await formUpload(owner.token, { cutId: owner.cutId }, 'a.wav', bytes)).status).toBe(201);
    const tus = await tusUpload(owner.token, { cutId: owner.cutId, filename: 'b.wav' }, bytes);
    expect(tus.status).toBe(204);
    const quota = (await api.request('GET', '/api/files/storage', { token: owner.token })).body.quota;
    expect(quota).toEqual({ limitBytes: MiB, usedBytes: 2 * bytes.length });
  });
});
