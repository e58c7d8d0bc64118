import { sampleBytes } from '../../support/files.js';
import { type Actor, everyone, expectStatus, type Fixture, type MatrixRow, type SessionActorName } from '../fixture.js';

const TUS = { 'tus-resumable': '1.0.0' };
const BYTES = sampleBytes('wav', 256);
const tus = () => TUS;

/** The creation headers of a 256-byte take.wav for the shared project's cut. */
const creation = (fx: Fixture) => ({
  ...TUS,
  'upload-length': String(BYTES.length),
  'upload-metadata': `cutId ${Buffer.from(fx.project.cutId).toString('base64')},filename ${Buffer.from('take.wav').toString('base64')}`,
});

/** Only its creator sees an upload: everyone else, site ADMINs and project ADMINs included, gets 404. */
const creatorOnly = (status: number): Record<SessionActorName, number> => ({
  anonymous: 401,
  nonMember: 404,
  member: 404,
  projectAdmin: status,
  siteAdminNonMember: 404,
});

/** A fresh resumable upload of the project's ADMIN; answers its path. */
async function newUpload(fx: Fixture): Promise<string> {
  const response = await fx.api.request('POST', '/api/uploads', { token: fx.actors.projectAdmin.token, headers: creation(fx) });
  await expectStatus(Promise.resolve(response), 201);
  return response.headers.get('location')!;
}

/** One upload of the project's ADMIN per fixture, for calls that must not change it (at most 10 are open at once). */
const sharedUploads = new WeakMap<Fixture, Promise<string>>();
const sharedUpload = (fx: Fixture) => {
  if (!sharedUploads.has(fx)) sharedUploads.set(fx, newUpload(fx));
  return sharedUploads.get(fx)!;
};

/** Its creator's call changes the upload: a fresh one then; everyone else is refused the shared one. */
const uploadFor = (fx: Fixture, actor: Actor) => (actor === fx.actors.projectAdmin ? newUpload(fx) : sharedUpload(fx));

export const rows: MatrixRow[] = [
  // Discovery needs no credentials: a token, whatever its scope, is not even looked at.
  { endpoint: 'OPTIONS /api/uploads', path: () => '/api/uploads', expect: everyone(204), tokens: { readToken: 204, reviewToken: 204 } },
  {
    endpoint: 'POST /api/uploads',
    path: () => '/api/uploads',
    headers: creation,
    expect: { anonymous: 401, nonMember: 404, member: 201, projectAdmin: 201, siteAdminNonMember: 404 },
  },
  { endpoint: 'HEAD /api/uploads/:id', path: (fx) => sharedUpload(fx), headers: tus, expect: creatorOnly(200) },
  {
    endpoint: 'PATCH /api/uploads/:id',
    path: uploadFor,
    body: () => new Uint8Array(BYTES),
    headers: () => ({ ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }),
    expect: creatorOnly(204),
  },
  { endpoint: 'DELETE /api/uploads/:id', path: uploadFor, headers: tus, expect: creatorOnly(204) },
];
