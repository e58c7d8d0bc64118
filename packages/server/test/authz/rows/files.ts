import { expect } from 'vitest';
import { analysed, previewed, sampleBytes, toneWav, upload } from '../../support/files.js';
import { zipOf } from '../../support/zip.js';
import { adminOnly, anyMember, everyone, expectStatus, type Fixture, type MatrixRow } from '../fixture.js';

/** A file the project's ADMIN uploaded to the shared project, made once per fixture. */
const sharedFiles = new WeakMap<Fixture, Promise<{ id: string; url: string }>>();
const sharedFile = (fx: Fixture) => {
  if (!sharedFiles.has(fx)) sharedFiles.set(fx, newFile(fx));
  return sharedFiles.get(fx)!;
};

/** A fresh file uploaded by the project's ADMIN: for rows that delete it. */
const newFile = (fx: Fixture) =>
  expectStatus(upload(fx.api, fx.actors.projectAdmin.token!, fx.project.cutId, 'take.mp3', sampleBytes('mp3', 256)), 201);

/** A share link of the shared file, made once per fixture. */
const shareTokens = new WeakMap<Fixture, Promise<string>>();
const shareToken = (fx: Fixture) => {
  if (!shareTokens.has(fx)) {
    shareTokens.set(
      fx,
      sharedFile(fx).then(async (file) => {
        const link = await expectStatus(fx.api.request('POST', `/api/files/${file.id}/share`, { token: fx.actors.projectAdmin.token }), 201);
        return link.token as string;
      }),
    );
  }
  return shareTokens.get(fx)!;
};

/** A real WAV whose analysis is done, and a share link of it (for the waveform rows), made once per fixture. */
const analysedFiles = new WeakMap<Fixture, Promise<{ id: string; token: string }>>();
const analysedFile = (fx: Fixture) => {
  if (!analysedFiles.has(fx)) analysedFiles.set(fx, newAnalysedFile(fx));
  return analysedFiles.get(fx)!;
};

async function newAnalysedFile(fx: Fixture): Promise<{ id: string; token: string }> {
  const token = fx.actors.projectAdmin.token!;
  const file = await expectStatus(upload(fx.api, token, fx.project.cutId, 'tone.wav', toneWav(2)), 201);
  expect((await analysed(fx.api, token, file.id)).analysis).toBe('done');
  expect((await previewed(fx.api, token, file.id)).preview.status).toBe('done');
  const link = await expectStatus(fx.api.request('POST', `/api/files/${file.id}/share`, { token }), 201);
  return { id: file.id, token: link.token };
}

/** A STEM ZIP whose analysis is done, made once per fixture. */
const analysedStems = new WeakMap<Fixture, Promise<string>>();
const analysedStem = (fx: Fixture) => {
  if (!analysedStems.has(fx)) analysedStems.set(fx, newAnalysedStem(fx));
  return analysedStems.get(fx)!;
};

async function newAnalysedStem(fx: Fixture): Promise<string> {
  const token = fx.actors.projectAdmin.token!;
  const zip = await zipOf([['drums.wav', toneWav(1)], ['notes.txt', Buffer.from('notes')]]);
  const file = await expectStatus(upload(fx.api, token, fx.project.cutId, 'stems.zip', zip), 201);
  expect((await analysed(fx.api, token, file.id)).analysis).toBe('done');
  return file.id;
}

const uploadForm = (fx: Fixture) => {
  const form = new FormData();
  form.append('cutId', fx.project.cutId);
  form.append('file', new Blob([new Uint8Array(sampleBytes('wav', 256))]), 'take.wav');
  return form;
};

export const rows: MatrixRow[] = [
  {
    endpoint: 'POST /api/files/upload',
    path: () => '/api/files/upload',
    body: (fx) => uploadForm(fx),
    expect: anyMember(201),
  },
  {
    endpoint: 'GET /api/files/storage',
    path: () => '/api/files/storage',
    expect: { ...everyone(200), anonymous: 401 },
  },
  {
    endpoint: 'GET /api/projects/:id/largest-files',
    path: (fx) => `/api/projects/${fx.project.id}/largest-files`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/files/:id',
    path: async (fx) => `/api/files/${(await sharedFile(fx)).id}`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/files/:id/versions',
    path: async (fx) => `/api/files/${(await sharedFile(fx)).id}/versions`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/files/:id/preview',
    path: async (fx) => `/api/files/${(await analysedFile(fx)).id}/preview`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/share/:token/preview',
    path: async (fx) => `/api/share/${(await analysedFile(fx)).token}/preview`,
    expect: everyone(200),
  },
  {
    endpoint: 'GET /api/files/:id/download',
    path: async (fx) => `/api/files/${(await sharedFile(fx)).id}/download`,
    expect: anyMember(),
  },
  {
    endpoint: 'HEAD /api/files/:id/download',
    path: async (fx) => `/api/files/${(await sharedFile(fx)).id}/download`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /uploads/files/:id.:ext',
    path: async (fx) => (await sharedFile(fx)).url,
    expect: anyMember(),
  },
  {
    endpoint: 'POST /api/files/:id/share',
    path: async (fx) => `/api/files/${(await sharedFile(fx)).id}/share`,
    body: () => ({ expiresIn: 3600 }),
    expect: anyMember(201),
  },
  {
    endpoint: "DELETE /api/files/:id/share (another's file)",
    path: async (fx) => `/api/files/${(await newFile(fx)).id}/share`,
    expect: adminOnly(),
  },
  {
    endpoint: "DELETE /api/files/:id/share (the caller's own file)",
    path: async (fx, actor) => `/api/files/${await fx.ownFileIn(fx.project.cutId, actor)}/share`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/share/:token',
    path: async (fx) => `/api/share/${await shareToken(fx)}`,
    expect: everyone(200),
  },
  {
    endpoint: 'GET /api/files/:id/peaks',
    path: async (fx) => `/api/files/${(await analysedFile(fx)).id}/peaks`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/files/:id/entries',
    path: async (fx) => `/api/files/${await analysedStem(fx)}/entries`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/share/:token/peaks',
    path: async (fx) => `/api/share/${(await analysedFile(fx)).token}/peaks`,
    expect: everyone(200),
  },
  {
    endpoint: 'GET /share/:token',
    path: async (fx) => `/share/${await shareToken(fx)}`,
    expect: everyone(200),
  },
  {
    endpoint: 'DELETE /api/files/:id',
    path: async (fx) => `/api/files/${(await newFile(fx)).id}`,
    expect: adminOnly(),
  },
];
