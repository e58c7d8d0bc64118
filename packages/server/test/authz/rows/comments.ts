import { sampleBytes, upload } from '../../support/files.js';
import { adminOnly, anyMember, type Actor, expectStatus, type Fixture, type MatrixRow } from '../fixture.js';

/** A file the project's ADMIN uploaded to the shared project, made once per fixture, to comment on. */
const commentedFiles = new WeakMap<Fixture, Promise<string>>();
const commentedFile = (fx: Fixture): Promise<string> => {
  if (!commentedFiles.has(fx)) {
    commentedFiles.set(
      fx,
      expectStatus(upload(fx.api, fx.actors.projectAdmin.token!, fx.project.cutId, 'mix.mp3', sampleBytes('mp3', 256)), 201).then((file) => file.id as string),
    );
  }
  return commentedFiles.get(fx)!;
};

/** A fresh comment of the project's ADMIN: rows that change or delete it get their own. */
async function adminsComment(fx: Fixture): Promise<string> {
  const fileId = await commentedFile(fx);
  const created = await expectStatus(fx.api.request('POST', `/api/files/${fileId}/comments`, { token: fx.actors.projectAdmin.token, json: { body: 'Kick too loud', atMs: 0 } }), 201);
  return `/api/comments/${created.id}`;
}

/** Reviews take a person's session or a review token: a write token (a CI job) cannot approve its own gate (403, scope first). */
const REVIEW_TOKENS = { writeToken: 403, writeTokenOtherProject: 403, reviewToken: 200 };

const filePath = async (fx: Fixture, suffix: string) => `/api/files/${await commentedFile(fx)}${suffix}`;

export const rows: MatrixRow[] = [
  { endpoint: 'GET /api/files/:id/comments', path: (fx) => filePath(fx, '/comments'), expect: anyMember() },
  { endpoint: 'POST /api/files/:id/comments', path: (fx) => filePath(fx, '/comments'), body: () => ({ body: 'At the chorus', atMs: 0 }), expect: anyMember(201) },
  { endpoint: 'GET /api/files/:id/comments/export', path: (fx) => filePath(fx, '/comments/export?format=json'), expect: anyMember() },
  { endpoint: 'GET /api/comments/:id', path: adminsComment, expect: anyMember() },
  // Only its author (the project's ADMIN here) edits a comment.
  { endpoint: 'PUT /api/comments/:id', path: adminsComment, body: () => ({ body: 'Edited' }), expect: adminOnly() },
  { endpoint: 'PUT /api/comments/:id/resolved', path: async (fx) => `${await adminsComment(fx)}/resolved`, expect: anyMember() },
  { endpoint: 'DELETE /api/comments/:id/resolved', path: async (fx) => `${await adminsComment(fx)}/resolved`, expect: anyMember() },
  // Its author or a project ADMIN deletes it: here both are the project's ADMIN.
  { endpoint: 'DELETE /api/comments/:id', path: adminsComment, expect: adminOnly() },
  { endpoint: 'GET /api/cuts/:id/comments', path: (fx) => `/api/cuts/${fx.project.cutId}/comments`, expect: anyMember() },
  { endpoint: 'GET /api/projects/:id/comments', path: (fx) => `/api/projects/${fx.project.id}/comments`, expect: anyMember() },
  { endpoint: 'GET /api/files/:id/reviews', path: (fx) => filePath(fx, '/reviews'), expect: anyMember() },
  // Any member asks another: the MEMBER asks the ADMIN, everyone else the MEMBER (never themself).
  {
    endpoint: 'POST /api/files/:id/review-requests',
    path: (fx) => filePath(fx, '/review-requests'),
    body: (fx, actor) => ({ userIds: [actor.name === 'member' ? fx.actors.projectAdmin.userId : fx.actors.member.userId] }),
    expect: anyMember(201),
  },
  { endpoint: 'PUT /api/files/:id/review', path: (fx) => filePath(fx, '/review'), body: () => ({ state: 'approved' }), expect: anyMember(), tokens: REVIEW_TOKENS },
  {
    // Withdraws the caller's own review, which each caller that may review first leaves.
    endpoint: 'DELETE /api/files/:id/review',
    path: async (fx: Fixture, actor: Actor) => {
      const path = await filePath(fx, '/review');
      await fx.api.request('PUT', path, { token: actor.token, json: { state: 'approved' } });
      return path;
    },
    expect: anyMember(),
    tokens: REVIEW_TOKENS,
  },
];
