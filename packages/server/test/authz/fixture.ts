import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

export type Api = ReturnType<typeof client>;

/** Who calls: nobody, a stranger to the project, its MEMBER, its ADMIN, a site ADMIN who is not a member. */
export const SESSION_ACTOR_NAMES = ['anonymous', 'nonMember', 'member', 'projectAdmin', 'siteAdminNonMember'] as const;
/**
 * Personal access tokens of the project's ADMIN: `read`, `write`, and `write` limited to another project
 * of theirs. Their expected statuses follow from the ADMIN's (see `tokenExpectations`) unless a row says.
 */
export const TOKEN_ACTOR_NAMES = ['readToken', 'writeToken', 'writeTokenOtherProject', 'reviewToken'] as const;
export const ACTOR_NAMES = [...SESSION_ACTOR_NAMES, ...TOKEN_ACTOR_NAMES] as const;
export type SessionActorName = (typeof SESSION_ACTOR_NAMES)[number];
export type TokenActorName = (typeof TOKEN_ACTOR_NAMES)[number];
export type ActorName = (typeof ACTOR_NAMES)[number];

export interface Actor {
  name: ActorName;
  /** Absent for `anonymous`. */
  token?: string;
  userId?: string;
}

/** A project as the fixture builds it: `projectAdmin` is its ADMIN, `member` its MEMBER. */
export interface SeededProject {
  id: string;
  vibeId: string;
  cutId: string;
}

export interface Fixture {
  server: TestServer;
  api: Api;
  actors: Record<ActorName, Actor>;
  /** The shared project, with one vibe and one cut: rows that only read or change names use it. */
  project: SeededProject;
  /** A second vibe of `project` (a move target). */
  otherVibeId: string;
  /** The cover of `project` and the image of its vibe: `/uploads/images/<uuid>.<ext>`. */
  projectImageUrl: string;
  vibeImageUrl: string;
  /** A project whose only member is `nonMember` (with a vibe and a cut): for cross-project rows. */
  foreignProject: SeededProject;
  /** A second project of `projectAdmin` alone: the one `writeTokenOtherProject` is limited to. */
  adminOtherProject: SeededProject;
  /** A fresh project like `project`: for rows that delete, reorder or change members, one per call. */
  newProject(): Promise<SeededProject>;
  /** A fresh vibe, with a cut, in `project`. */
  newVibe(): Promise<{ vibeId: string; cutId: string }>;
  /** A fresh cut in `project`'s vibe. */
  newCut(): Promise<string>;
  /** A fresh user added to `project` with `role`. */
  newMember(role?: 'MEMBER' | 'ADMIN'): Promise<string>;
  /** A fresh failed (dead) job, of a kind the test server runs no handler for (a retry leaves it queued). */
  newFailedJob(): Promise<string>;
  /** A file id in `cutId` uploaded by `actor` when it is a member of `project`, else by its ADMIN. */
  ownFileIn(cutId: string, actor: Actor): Promise<string>;
  /** A file id in `cutId` uploaded by someone other than `actor`: the MEMBER's for the ADMIN, else the ADMIN's. */
  othersFileIn(cutId: string, actor: Actor): Promise<string>;
}

/** One endpoint of the authorization matrix; the format is described at the top of matrix.test.ts. */
export interface MatrixRow {
  endpoint: string;
  path: (fx: Fixture, actor: Actor) => string | Promise<string>;
  /** JSON, a FormData (multipart) or bytes (sent as they are, with `headers`). */
  body?: (fx: Fixture, actor: Actor) => unknown;
  /** Request headers beyond the token (the tus protocol's). */
  headers?: (fx: Fixture) => Record<string, string>;
  expect: Record<SessionActorName, number>;
  /** Where a token actor's status is not the one `tokenExpectations` derives. */
  tokens?: Partial<Record<TokenActorName, number>>;
}

/** Every file of `rows/` with its rows, in file name order. */
export async function loadRowSets(): Promise<Array<{ name: string; rows: MatrixRow[] }>> {
  const names = readdirSync(new URL('./rows/', import.meta.url)).filter((name) => name.endsWith('.ts')).sort();
  return Promise.all(
    names.map(async (name) => ({ name, rows: ((await import(/* @vite-ignore */ new URL(`./rows/${name}`, import.meta.url).href)) as { rows: MatrixRow[] }).rows })),
  );
}

/** Calls `row`'s endpoint on `path` (its own, or another spelling of it) as `actor`, with the row's body and headers. */
export async function callRow(fx: Fixture, row: MatrixRow, path: string, actor: Actor) {
  const body = await row.body?.(fx, actor);
  return fx.api.request(row.endpoint.split(' ')[0]!, path, {
    token: actor.token,
    headers: row.headers?.(fx),
    ...(body instanceof FormData || body instanceof Uint8Array ? { body: body as BodyInit } : body === undefined ? {} : { json: body }),
  });
}

/** `/api/projects/:id` and `/api/projects/:projectId` both become `/api/projects/{}`, `/:id.:ext` too; a row's suffix in parentheses goes. */
export const shape = (route: string) => route.replace(/ \(.*\)$/, '').replace(/\/[^/]*:[^/]*/g, '/{}');

/**
 * What the ADMIN's tokens get, from what the ADMIN gets: nothing under /api/auth (but reading me) or
 * /api/tokens (403); a read token only GET and HEAD (403); a token limited to another project is a
 * stranger inside this one (the non-member's status where it differs from the ADMIN's), and the ADMIN elsewhere.
 */
export function tokenExpectations(row: MatrixRow, method: string): Record<TokenActorName, number> {
  const path = row.endpoint.split(' ')[1]!;
  const sessionOnly = (path.startsWith('/api/auth') && !(path === '/api/auth/me' && method === 'GET')) || path.startsWith('/api/tokens');
  const reading = method === 'GET' || method === 'HEAD';
  const admin = row.expect.projectAdmin;
  const derived = {
    readToken: sessionOnly || !reading ? 403 : admin,
    // The review scope reads, and reviews (rows of the review routes say so); it writes nothing else.
    reviewToken: sessionOnly || !reading ? 403 : admin,
    writeToken: sessionOnly ? 403 : admin,
    writeTokenOtherProject: sessionOnly ? 403 : admin === row.expect.nonMember ? admin : row.expect.nonMember,
  };
  return { ...derived, ...row.tokens };
}

/** The session actor whose rights a token actor carries (the ADMIN's), or the actor itself. */
export const rightsOf = (actor: Actor): ActorName => ((TOKEN_ACTOR_NAMES as readonly string[]).includes(actor.name) ? 'projectAdmin' : actor.name);

/** The leading bytes of a PNG and some more: an image the server accepts. */
export const PNG_BYTES = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(64, 7)]);

/** Creates a project as `token`, with one vibe holding one cut. */
export async function seedProject(api: Api, token: string, name = 'Project'): Promise<SeededProject> {
  const project = await expectStatus(api.request('POST', '/api/projects', { token, json: { name } }), 201);
  const vibe = await expectStatus(api.request('POST', `/api/projects/${project.id}/vibes`, { token, json: { name: 'Vibe' } }), 201);
  const cut = await expectStatus(api.request('POST', `/api/vibes/${vibe.id}/cuts`, { token, json: { name: 'Cut' } }), 201);
  return { id: project.id, vibeId: vibe.id, cutId: cut.id };
}

/** The token at the end of an invitation link. */
export const inviteToken = (inviteUrl: string): string => inviteUrl.slice(inviteUrl.lastIndexOf('/') + 1);

/** Adds a registered user to a project the way users do it: invited by an ADMIN, accepted through the link. */
export async function addMember(api: Api, adminToken: string, projectId: string, user: User, role: 'MEMBER' | 'ADMIN' = 'MEMBER') {
  const invited = await expectStatus(
    api.request('POST', `/api/projects/${projectId}/invite`, { token: adminToken, json: { email: user.user.email, role } }),
    201,
  );
  const accepted = await expectStatus(
    api.request('POST', '/api/invitations/accept', { token: user.accessToken, json: { token: inviteToken(invited.inviteUrl) } }),
    200,
  );
  return accepted.member;
}

/** Awaits a response, fails with its body unless it has `status`, and answers its body. */
export async function expectStatus<T = any>(pending: Promise<{ status: number; body: T; text: string }>, status: number): Promise<T> {
  const response = await pending;
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${response.text}`);
  return response.body;
}

/**
 * Registers the actors (the site ADMIN first: the first account of a database is the site ADMIN) and
 * builds their projects. The server must be fresh.
 */
export async function buildFixture(server: TestServer): Promise<Fixture> {
  const api = client(server.url);
  const siteAdmin = await api.register({ name: 'Site Admin' });
  expect(siteAdmin.user.role).toBe('ADMIN');
  // One after another: the password queue holds two hashes per address, and a third at once is a 429.
  const owner = await api.register({ name: 'Owner' });
  const member = await api.register({ name: 'Member' });
  const stranger = await api.register({ name: 'Stranger' });
  const actors: Record<SessionActorName, Actor> & Partial<Record<TokenActorName, Actor>> = {
    anonymous: { name: 'anonymous' },
    nonMember: { name: 'nonMember', token: stranger.accessToken, userId: stranger.user.id },
    member: { name: 'member', token: member.accessToken, userId: member.user.id },
    projectAdmin: { name: 'projectAdmin', token: owner.accessToken, userId: owner.user.id },
    siteAdminNonMember: { name: 'siteAdminNonMember', token: siteAdmin.accessToken, userId: siteAdmin.user.id },
  };

  const newProject = async (): Promise<SeededProject> => {
    const seeded = await seedProject(api, owner.accessToken);
    await addMember(api, owner.accessToken, seeded.id, member);
    return seeded;
  };
  const project = await newProject();
  const otherVibe = await expectStatus(
    api.request('POST', `/api/projects/${project.id}/vibes`, { token: owner.accessToken, json: { name: 'Other vibe' } }),
    201,
  );
  const foreignProject = await seedProject(api, stranger.accessToken, 'Foreign');
  const adminOtherProject = await seedProject(api, owner.accessToken, 'Owner elsewhere');
  const tokenOfOwner = async (name: TokenActorName, scope: 'read' | 'write' | 'review', projectIds?: string[]): Promise<Actor> => {
    const created = await expectStatus(
      api.request('POST', '/api/tokens', { token: owner.accessToken, json: { name, scope, projectIds, expiresIn: 3600 } }),
      201,
    );
    return { name, token: created.token, userId: owner.user.id };
  };
  actors.readToken = await tokenOfOwner('readToken', 'read');
  actors.writeToken = await tokenOfOwner('writeToken', 'write');
  actors.reviewToken = await tokenOfOwner('reviewToken', 'review');
  actors.writeTokenOtherProject = await tokenOfOwner('writeTokenOtherProject', 'write', [adminOtherProject.id]);
  const withImage = (name: string) => {
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(PNG_BYTES)]), name);
    return form;
  };
  const cover = await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, body: withImage('cover.png') }), 200);
  const vibeImage = await expectStatus(api.request('PUT', `/api/vibes/${project.vibeId}`, { token: owner.accessToken, body: withImage('vibe.png') }), 200);

  // Names are unique within their parent (a project's vibes, a vibe's cuts), and a cut may move anywhere.
  let fresh = 0;
  const newCut = async (vibeId = project.vibeId): Promise<string> =>
    (await expectStatus(api.request('POST', `/api/vibes/${vibeId}/cuts`, { token: owner.accessToken, json: { name: `Fresh cut ${++fresh}` } }), 201)).id;
  const storedBy = async (cutId: string, userId: string) => (await storeFileDirectly(server, cutId, userId)).id;

  return {
    server,
    api,
    actors: actors as Record<ActorName, Actor>,
    project,
    otherVibeId: otherVibe.id,
    projectImageUrl: cover.imageUrl,
    vibeImageUrl: vibeImage.imageUrl,
    foreignProject,
    adminOtherProject,
    newProject,
    async newVibe() {
      const vibe = await expectStatus(
        api.request('POST', `/api/projects/${project.id}/vibes`, { token: owner.accessToken, json: { name: `Fresh vibe ${++fresh}` } }),
        201,
      );
      return { vibeId: vibe.id, cutId: await newCut(vibe.id) };
    },
    newCut: () => newCut(),
    async newMember(role = 'MEMBER') {
      const user = await api.register({ name: 'Fresh member' });
      await addMember(api, owner.accessToken, project.id, user, role);
      return user.user.id;
    },
    async newFailedJob() {
      const [job] = await server.sql<{ id: string }[]>`
        insert into jobs (kind, state, attempts, max_attempts, last_error, finished_at)
        values ('trash_purge', 'failed', 5, 5, 'the matrix planted it', now()) returning id`;
      return job!.id;
    },
    ownFileIn: (cutId, actor) =>
      storedBy(cutId, rightsOf(actor) === 'member' || rightsOf(actor) === 'projectAdmin' ? actor.userId! : owner.user.id),
    othersFileIn: (cutId, actor) => storedBy(cutId, rightsOf(actor) === 'projectAdmin' ? member.user.id : owner.user.id),
  };
}

/** Expected statuses that many rows share. */
export const everyone = (status: number): Record<SessionActorName, number> => ({
  anonymous: status,
  nonMember: status,
  member: status,
  projectAdmin: status,
  siteAdminNonMember: status,
});
/** Inside a project, any member may. */
export const anyMember = (status = 200): Record<SessionActorName, number> => ({
  anonymous: 401,
  nonMember: 404,
  member: status,
  projectAdmin: status,
  siteAdminNonMember: 404,
});
/** Inside a project, only its ADMIN may. */
export const adminOnly = (status = 200): Record<SessionActorName, number> => ({ ...anyMember(status), member: 403 });

/**
 * Stores a file under a cut the way an upload leaves it (a row and its bytes under DATA_DIR/files), without
 * going through the upload endpoint, so delete cascades can be checked on their own.
 */
export async function storeFileDirectly(server: TestServer, cutId: string, uploadedBy: string): Promise<{ id: string; path: string }> {
  const id = randomUUID();
  const bytes = Buffer.from('ID3 test bytes');
  await server.sql`
    insert into files (id, cut_id, project_id, name, extension, type, size, mime_type, sha256, uploaded_by)
    select ${id}, id, project_id, 'take', 'mp3', 'CUT', ${bytes.length}, 'audio/mpeg', ${'0'.repeat(64)}, ${uploadedBy}
    from cuts where id = ${cutId}`;
  const path = join(server.dataDir, 'files', `${id}.mp3`);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
  return { id, path };
}

export type User = Awaited<ReturnType<Api['register']>>;

/** A fresh test server with users registered in order (the first is the site ADMIN). */
export async function startWithUsers<const Names extends readonly string[]>(
  ...names: Names
): Promise<{ server: TestServer; api: Api; users: { [K in keyof Names]: User } }> {
  return startWithUsersAndSettings({}, ...names);
}

/** As startWithUsers, on a server with these settings (TRASH_RETENTION_DAYS=0: deletes for good). */
export async function startWithUsersAndSettings<const Names extends readonly string[]>(
  env: Record<string, string>,
  ...names: Names
): Promise<{ server: TestServer; api: Api; users: { [K in keyof Names]: User } }> {
  const server = await startTestServer(env);
  const api = client(server.url);
  const users: User[] = [];
  for (const name of names) users.push(await api.register({ name }));
  return { server, api, users: users as { [K in keyof Names]: User } };
}

/** An API timestamp: ISO 8601 UTC with milliseconds. */
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
