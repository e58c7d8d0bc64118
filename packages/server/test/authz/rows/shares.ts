import { expect } from 'vitest';
import { analysed, previewed, sampleBytes, toneWav, upload } from '../../support/files.js';
import { adminOnly, anyMember, everyone, expectStatus, type Actor, type Fixture, type MatrixRow } from '../fixture.js';

/** A cut of the shared project holding one file, with a link made by its ADMIN; made once per fixture. */
const sharedCuts = new WeakMap<Fixture, Promise<{ cutId: string; fileId: string; token: string }>>();
const sharedCut = (fx: Fixture) => {
  if (!sharedCuts.has(fx)) {
    sharedCuts.set(
      fx,
      (async () => {
        const cutId = await fx.newCut();
        const file = await expectStatus(upload(fx.api, fx.actors.projectAdmin.token!, cutId, 'take.wav', sampleBytes('wav', 256)), 201);
        const link = await expectStatus(fx.api.request('POST', `/api/cuts/${cutId}/share`, { token: fx.actors.projectAdmin.token }), 201);
        return { cutId, fileId: file.id as string, token: link.token as string };
      })(),
    );
  }
  return sharedCuts.get(fx)!;
};

/** A cut holding a tone the server has analysed and made a preview of, with a link made by its ADMIN; made once per fixture. */
const sharedAnalysedCuts = new WeakMap<Fixture, Promise<{ fileId: string; token: string }>>();
const sharedAnalysedCut = (fx: Fixture) => {
  if (!sharedAnalysedCuts.has(fx)) sharedAnalysedCuts.set(fx, newSharedAnalysedCut(fx));
  return sharedAnalysedCuts.get(fx)!;
};

async function newSharedAnalysedCut(fx: Fixture): Promise<{ fileId: string; token: string }> {
  const token = fx.actors.projectAdmin.token!;
  const cutId = await fx.newCut();
  const file = await expectStatus(upload(fx.api, token, cutId, 'tone.wav', toneWav(2)), 201);
  expect((await analysed(fx.api, token, file.id)).analysis).toBe('done');
  expect((await previewed(fx.api, token, file.id)).preview.status).toBe('done');
  const link = await expectStatus(fx.api.request('POST', `/api/cuts/${cutId}/share`, { token }), 201);
  return { fileId: file.id as string, token: link.token as string };
}

/** A new cut with a link made by `creator`; answers the cut and the link's id. */
async function cutWithLink(fx: Fixture, creator: Actor): Promise<{ cutId: string; linkId: string }> {
  const cutId = await fx.newCut();
  await expectStatus(fx.api.request('POST', `/api/cuts/${cutId}/share`, { token: creator.token }), 201);
  const [link] = await expectStatus(fx.api.request('GET', `/api/cuts/${cutId}/shares`, { token: fx.actors.projectAdmin.token }), 200);
  return { cutId, linkId: link.id };
}

/** A new feedback link on the shared cut's file, made by `creator`; answers its id. */
async function feedbackLinkBy(fx: Fixture, creator: Actor): Promise<string> {
  const { fileId } = await sharedCut(fx);
  await expectStatus(fx.api.request('POST', `/api/files/${fileId}/share`, { token: creator.token, json: { allowComments: true } }), 201);
  const links = await expectStatus(fx.api.request('GET', `/api/files/${fileId}/shares`, { token: fx.actors.projectAdmin.token }), 200);
  return links.at(-1).id;
}

/** Members make their own link; everyone else gets the ADMIN's. */
const ownOrAdmins = (fx: Fixture, actor: Actor): Actor =>
  actor.name === 'member' || actor.name === 'projectAdmin' ? actor : fx.actors.projectAdmin;

/** A file link made with allowComments by the project's ADMIN; made once per fixture. */
const feedbackLinks = new WeakMap<Fixture, Promise<string>>();
const feedbackLink = (fx: Fixture) => {
  if (!feedbackLinks.has(fx)) {
    feedbackLinks.set(
      fx,
      (async () => {
        const { fileId } = await sharedCut(fx);
        const link = await expectStatus(fx.api.request('POST', `/api/files/${fileId}/share`, { token: fx.actors.projectAdmin.token, json: { allowComments: true } }), 201);
        return link.token as string;
      })(),
    );
  }
  return feedbackLinks.get(fx)!;
};

export const rows: MatrixRow[] = [
  {
    endpoint: 'GET /api/share/:token/comments',
    path: async (fx) => `/api/share/${await feedbackLink(fx)}/comments`,
    expect: everyone(200),
  },
  {
    endpoint: 'POST /api/share/:token/comments',
    path: async (fx) => `/api/share/${await feedbackLink(fx)}/comments`,
    body: () => ({ name: 'Guest', body: 'Nice mix' }),
    expect: everyone(201),
    // No credentials needed: a token, whatever its scope, is not even looked at.
    tokens: { readToken: 201, reviewToken: 201 },
  },
  {
    endpoint: 'GET /share-assets/share-page.js',
    path: () => '/share-assets/share-page.js',
    expect: everyone(200),
  },
  {
    endpoint: 'GET /api/cuts/:id/archive',
    path: async (fx) => `/api/cuts/${(await sharedCut(fx)).cutId}/archive`,
    expect: anyMember(),
  },
  {
    endpoint: 'HEAD /api/cuts/:id/archive',
    path: async (fx) => `/api/cuts/${(await sharedCut(fx)).cutId}/archive`,
    expect: anyMember(),
  },
  {
    endpoint: 'POST /api/cuts/:id/share',
    path: async (fx) => `/api/cuts/${(await sharedCut(fx)).cutId}/share`,
    body: () => ({ expiresIn: 3600 }),
    expect: anyMember(201),
  },
  {
    endpoint: "DELETE /api/cuts/:id/share (links others made)",
    path: async (fx) => `/api/cuts/${(await cutWithLink(fx, fx.actors.projectAdmin)).cutId}/share`,
    expect: adminOnly(),
  },
  {
    endpoint: "DELETE /api/cuts/:id/share (the caller's own links)",
    path: async (fx, actor) => `/api/cuts/${(await cutWithLink(fx, ownOrAdmins(fx, actor))).cutId}/share`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/cuts/:id/shares',
    path: async (fx) => `/api/cuts/${(await sharedCut(fx)).cutId}/shares`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/files/:id/shares',
    path: async (fx) => `/api/files/${(await sharedCut(fx)).fileId}/shares`,
    expect: anyMember(),
  },
  {
    endpoint: "DELETE /api/shares/:id (another's link)",
    path: async (fx) => `/api/shares/${(await cutWithLink(fx, fx.actors.projectAdmin)).linkId}`,
    expect: adminOnly(),
  },
  {
    endpoint: "DELETE /api/shares/:id (the caller's own link)",
    path: async (fx, actor) => `/api/shares/${(await cutWithLink(fx, ownOrAdmins(fx, actor))).linkId}`,
    expect: anyMember(),
  },
  {
    endpoint: "PUT /api/shares/:id/comments-closed (another's link)",
    path: async (fx) => `/api/shares/${await feedbackLinkBy(fx, fx.actors.projectAdmin)}/comments-closed`,
    expect: adminOnly(),
  },
  {
    endpoint: "PUT /api/shares/:id/comments-closed (the caller's own link)",
    path: async (fx, actor) => `/api/shares/${await feedbackLinkBy(fx, ownOrAdmins(fx, actor))}/comments-closed`,
    expect: anyMember(),
  },
  {
    endpoint: "DELETE /api/shares/:id/comments-closed (another's link)",
    path: async (fx) => `/api/shares/${await feedbackLinkBy(fx, fx.actors.projectAdmin)}/comments-closed`,
    expect: adminOnly(),
  },
  {
    endpoint: "DELETE /api/shares/:id/comments-closed (the caller's own link)",
    path: async (fx, actor) => `/api/shares/${await feedbackLinkBy(fx, ownOrAdmins(fx, actor))}/comments-closed`,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /api/share/:token/files/:fileId',
    path: async (fx) => {
      const { token, fileId } = await sharedCut(fx);
      return `/api/share/${token}/files/${fileId}`;
    },
    expect: everyone(200),
  },
  {
    endpoint: 'GET /api/share/:token/files/:fileId/peaks',
    path: async (fx) => {
      const { token, fileId } = await sharedAnalysedCut(fx);
      return `/api/share/${token}/files/${fileId}/peaks`;
    },
    expect: everyone(200),
  },
  {
    endpoint: 'GET /api/share/:token/files/:fileId/preview',
    path: async (fx) => {
      const { token, fileId } = await sharedAnalysedCut(fx);
      return `/api/share/${token}/files/${fileId}/preview`;
    },
    expect: everyone(200),
  },
  {
    endpoint: 'GET /api/share/:token/archive',
    path: async (fx) => `/api/share/${(await sharedCut(fx)).token}/archive`,
    expect: everyone(200),
  },
];
