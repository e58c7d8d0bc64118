import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, PNG_BYTES, seedProject, type User } from './authz/fixture.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: Api;
let owner: User;
let member: User;
let stranger: User;

const MAX_IMAGE_BYTES = 4096;

beforeAll(async () => {
  // Deletes for good (TRASH_RETENTION_DAYS=0), so the images' bytes go at once.
  server = await startTestServer({ MAX_IMAGE_BYTES: String(MAX_IMAGE_BYTES), TRASH_RETENTION_DAYS: '0' });
  api = client(server.url);
  owner = await api.register({ name: 'Owner' });
  member = await api.register({ name: 'Member' });
  stranger = await api.register({ name: 'Stranger' });
});
afterAll(() => server?.close());

const PNG = PNG_BYTES;
const GIF = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(100, 1)]);
const IMAGE_URL = /^\/uploads\/images\/[0-9a-f-]{36}\.(png|gif|jpg|webp)$/;

function form(fields: Record<string, string>, image?: { bytes: Buffer; name: string }): FormData {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  if (image) body.append('image', new Blob([new Uint8Array(image.bytes)]), image.name);
  return body;
}

const storedImages = () => server.stored.list('images');
const imageKey = (url: string) => `images/${url.split('/').pop()!}`;

describe('project covers', () => {
  it('creates a project from a form with a cover, served to members with the file headers', async () => {
    const created = await api.request('POST', '/api/projects', {
      token: owner.accessToken,
      body: form({ name: ' Covered ', description: 'With art' }, { bytes: PNG, name: 'cover.PNG' }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Covered', description: 'With art', role: 'ADMIN', memberCount: 1 });
    expect(created.body.imageUrl).toMatch(IMAGE_URL);

    const image = await api.request('GET', created.body.imageUrl, { token: owner.accessToken });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('content-length')).toBe(String(PNG.length));
    expect(image.headers.get('x-content-type-options')).toBe('nosniff');
    expect(image.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const etag = image.headers.get('etag')!;
    expect(etag).toBe(`"${createHash('sha256').update(PNG).digest('hex')}"`);
    const unchanged = await api.request('GET', created.body.imageUrl, { token: owner.accessToken, headers: { 'if-none-match': etag } });
    expect(unchanged.status).toBe(304);
    const head = await api.request('HEAD', created.body.imageUrl, { token: owner.accessToken });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');

    const viaCookie = await api.request('GET', created.body.imageUrl, { headers: { cookie: `access_token=${owner.accessToken}` } });
    expect(viaCookie.status).toBe(200);
  });

  it('serves a cover as /uploads/files serves files: inline, Last-Modified, single ranges (206, 416)', async () => {
    const created = await expectStatus(
      api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Ranged' }, { bytes: PNG, name: 'r.png' }) }),
      201,
    );
    const image = await api.request('GET', created.imageUrl, { token: owner.accessToken });
    expect(image.headers.get('content-disposition')).toMatch(/^inline/);
    expect(image.headers.get('accept-ranges')).toBe('bytes');
    expect(image.headers.get('last-modified')).toBeTruthy();
    const range = await api.request('GET', created.imageUrl, { token: owner.accessToken, headers: { range: 'bytes=0-7' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 0-7/${PNG.length}`);
    expect(range.headers.get('content-length')).toBe('8');
    const outside = await api.request('GET', created.imageUrl, { token: owner.accessToken, headers: { range: `bytes=${PNG.length}-` } });
    expect(outside.status).toBe(416);
    expect((await api.request('HEAD', created.imageUrl)).status).toBe(401);
  });

  it('creates from a form without an image (imageUrl null) and clears the description with an empty form field', async () => {
    const created = await expectStatus(
      api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Plain form', description: 'Words' }) }),
      201,
    );
    expect(created).toMatchObject({ name: 'Plain form', description: 'Words', imageUrl: null, role: 'ADMIN', memberCount: 1 });
    const cleared = await expectStatus(api.request('PUT', `/api/projects/${created.id}`, { token: owner.accessToken, body: form({ description: '' }) }), 200);
    expect(cleared).toMatchObject({ name: 'Plain form', description: null, imageUrl: null });
  });

  it('hides a cover from strangers (404) and anonymous callers (401), and unknown names are 404', async () => {
    const created = await expectStatus(
      api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Private' }, { bytes: GIF, name: 'c.gif' }) }),
      201,
    );
    expect((await api.request('GET', created.imageUrl, { token: stranger.accessToken })).status).toBe(404);
    expect((await api.request('GET', created.imageUrl)).status).toBe(401);
    for (const name of ['00000000-0000-0000-0000-000000000000.png', 'not-an-image.png', '..%2F..%2Fsecret', created.imageUrl.split('/').pop().replace('.gif', '.png')]) {
      expect((await api.request('GET', `/uploads/images/${name}`, { token: owner.accessToken })).status).toBe(404);
    }
  });

  it('replaces a cover from a form and clears it with JSON image: null, removing the old bytes each time', async () => {
    const created = await expectStatus(
      api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Changing' }, { bytes: PNG, name: 'a.png' }) }),
      201,
    );
    const first = imageKey(created.imageUrl);
    const replaced = await expectStatus(
      api.request('PUT', `/api/projects/${created.id}`, { token: owner.accessToken, body: form({ name: 'Changed' }, { bytes: GIF, name: 'b.gif' }) }),
      200,
    );
    expect(replaced).toMatchObject({ name: 'Changed', imageUrl: expect.stringMatching(/\.gif$/) });
    expect(await server.stored.exists(first)).toBe(false);
    expect(await server.stored.exists(imageKey(replaced.imageUrl))).toBe(true);

    const kept = await expectStatus(api.request('PUT', `/api/projects/${created.id}`, { token: owner.accessToken, body: form({ description: 'Same art' }) }), 200);
    expect(kept.imageUrl).toBe(replaced.imageUrl);

    const cleared = await expectStatus(api.request('PUT', `/api/projects/${created.id}`, { token: owner.accessToken, json: { image: null } }), 200);
    expect(cleared.imageUrl).toBeNull();
    expect(await server.stored.exists(imageKey(replaced.imageUrl))).toBe(false);
  });

  it('refuses bytes that are not an image (415), an image over the limit (413) and invalid fields (400), keeping nothing', async () => {
    const before = await storedImages();
    const notImage = await api.request('POST', '/api/projects', {
      token: owner.accessToken,
      body: form({ name: 'Fake' }, { bytes: Buffer.from('<svg onload=alert(1)>'), name: 'cover.png' }),
    });
    expect(notImage.status).toBe(415);
    expect(notImage.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    const wrongExtension = await api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Svg' }, { bytes: PNG, name: 'cover.svg' }) });
    expect(wrongExtension.status).toBe(415);
    const tooLarge = await api.request('POST', '/api/projects', {
      token: owner.accessToken,
      body: form({ name: 'Huge' }, { bytes: Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE_BYTES)]), name: 'huge.png' }),
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.code).toBe('FILE_TOO_LARGE');
    const badName = await api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: '' }, { bytes: PNG, name: 'ok.png' }) });
    expect(badName.status).toBe(400);
    expect(badName.body.errors[0].field).toBe('name');
    expect(await storedImages()).toEqual(before);
    expect(await server.sql`select 1 from projects where name in ('Fake', 'Svg', 'Huge')`).toHaveLength(0);
  });

  it('types an image sent without a file name extension by its leading bytes', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const asBlob = new FormData();
    asBlob.append('name', 'Blob cover');
    asBlob.append('image', new Blob([new Uint8Array(PNG)], { type: 'image/png' }));
    const cover = await api.request('POST', '/api/projects', { token: owner.accessToken, body: asBlob });
    expect(cover.status).toBe(201);
    expect(cover.body.imageUrl).toMatch(/^\/uploads\/images\/[0-9a-f-]{36}\.png$/);
    const served = await api.request('GET', cover.body.imageUrl, { token: owner.accessToken });
    expect(served.headers.get('content-type')).toBe('image/png');

    const vibe = await api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, body: form({ name: 'Unnamed' }, { bytes: GIF, name: 'image' }) });
    expect(vibe.status).toBe(201);
    expect(vibe.body.imageUrl).toMatch(/\.gif$/);

    const before = await storedImages();
    for (const bytes of [Buffer.from('just some text, not an image'), Buffer.from('GIF')]) {
      const refused = await api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Not an image' }, { bytes, name: 'blob' }) });
      expect(refused.status).toBe(415);
      expect(refused.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    }
    const tooLarge = await api.request('PUT', `/api/vibes/${seeded.vibeId}`, {
      token: owner.accessToken,
      body: form({}, { bytes: Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE_BYTES)]), name: 'blob' }),
    });
    expect(tooLarge.status).toBe(413);
    expect(await storedImages()).toEqual(before);
  });

  it('stores no image for a MEMBER or a stranger trying to change the cover', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    await addMember(api, owner.accessToken, seeded.id, member);
    const before = await storedImages();
    const body = () => form({ name: 'Hijack' }, { bytes: PNG, name: 'x.png' });
    expect((await api.request('PUT', `/api/projects/${seeded.id}`, { token: member.accessToken, body: body() })).status).toBe(403);
    expect((await api.request('PUT', `/api/projects/${seeded.id}`, { token: stranger.accessToken, body: body() })).status).toBe(404);
    expect(await storedImages()).toEqual(before);
  });
});

describe('image size limit (413 FILE_TOO_LARGE)', () => {
  const ofSize = (size: number) => Buffer.concat([PNG, Buffer.alloc(size - PNG.length, 1)]);

  it('takes a cover or vibe image of exactly the limit and refuses one byte more, keeping nothing', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const atLimit = await api.request('POST', '/api/projects', {
      token: owner.accessToken,
      body: form({ name: 'At limit' }, { bytes: ofSize(MAX_IMAGE_BYTES), name: 'full.png' }),
    });
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.imageUrl).toMatch(IMAGE_URL);
    const vibeAtLimit = await api.request('POST', `/api/projects/${seeded.id}/vibes`, {
      token: owner.accessToken,
      body: form({ name: 'At limit' }, { bytes: ofSize(MAX_IMAGE_BYTES), name: 'full.png' }),
    });
    expect(vibeAtLimit.status).toBe(201);

    const before = await storedImages();
    const overLimit = () => form({ name: 'Over' }, { bytes: ofSize(MAX_IMAGE_BYTES + 1), name: 'over.png' });
    for (const [method, path] of [
      ['POST', '/api/projects'],
      ['PUT', `/api/projects/${seeded.id}`],
      ['POST', `/api/projects/${seeded.id}/vibes`],
      ['PUT', `/api/vibes/${seeded.vibeId}`],
    ] as const) {
      const response = await api.request(method, path, { token: owner.accessToken, body: overLimit() });
      expect(response.status, `${method} ${path}`).toBe(413);
      expect(response.body.code).toBe('FILE_TOO_LARGE');
    }
    expect(await storedImages()).toEqual(before);
    const [project] = await server.sql`select name, image from projects where id = ${seeded.id}`;
    expect(project).toEqual({ name: 'Project', image: null });
  });
});

describe('vibe images', () => {
  it('creates a vibe from a form without an image: imageUrl null', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const created = await api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, body: form({ name: ' Form vibe ' }) });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/vibes/${created.body.id}`);
    expect(created.body).toMatchObject({ name: 'Form vibe', imageUrl: null, position: 1, projectId: seeded.id });
  });

  it('creates, replaces and clears a vibe image; another project’s member cannot see it', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const created = await api.request('POST', `/api/projects/${seeded.id}/vibes`, {
      token: owner.accessToken,
      body: form({ name: 'Pictured' }, { bytes: PNG, name: 'v.png' }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Pictured', position: 1, imageUrl: expect.stringMatching(IMAGE_URL) });
    expect((await api.request('GET', created.body.imageUrl, { token: owner.accessToken })).status).toBe(200);
    const elsewhere = await seedProject(api, stranger.accessToken);
    expect(elsewhere.id).toBeTruthy();
    expect((await api.request('GET', created.body.imageUrl, { token: stranger.accessToken })).status).toBe(404);

    const replaced = await expectStatus(
      api.request('PUT', `/api/vibes/${created.body.id}`, { token: owner.accessToken, body: form({}, { bytes: GIF, name: 'w.gif' }) }),
      200,
    );
    expect(replaced).toMatchObject({ name: 'Pictured', imageUrl: expect.stringMatching(/\.gif$/) });
    expect(await server.stored.exists(imageKey(created.body.imageUrl))).toBe(false);
    const cleared = await expectStatus(api.request('PUT', `/api/vibes/${created.body.id}`, { token: owner.accessToken, json: { image: null } }), 200);
    expect(cleared.imageUrl).toBeNull();
    expect(await server.stored.exists(imageKey(replaced.imageUrl))).toBe(false);
  });

  it('refuses a vibe form with bad bytes or a bad name, keeping nothing', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const before = await storedImages();
    const fake = await api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, body: form({ name: 'V' }, { bytes: Buffer.from('GIF'), name: 'v.gif' }) });
    expect(fake.status).toBe(415);
    const unnamed = await api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, body: form({}, { bytes: PNG, name: 'v.png' }) });
    expect(unnamed.status).toBe(400);
    expect(await storedImages()).toEqual(before);
  });
});

describe('image ETags (the sha256 recorded at upload)', () => {
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const nameOf = (url: string) => url.split('/').pop()!;

  it('records the sha256 of covers and vibe images as they are stored, replaced and cleared, and serves it without hashing', async () => {
    const project = await expectStatus(
      api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Hashed' }, { bytes: PNG, name: 'c.png' }) }),
      201,
    );
    const vibe = await expectStatus(
      api.request('POST', `/api/projects/${project.id}/vibes`, { token: owner.accessToken, body: form({ name: 'Hashed' }, { bytes: GIF, name: 'v.gif' }) }),
      201,
    );
    const [projectRow] = await server.sql`select image_sha256 from projects where id = ${project.id}`;
    const [vibeRow] = await server.sql`select image_sha256 from vibes where id = ${vibe.id}`;
    expect(projectRow!.image_sha256).toBe(sha256(PNG));
    expect(vibeRow!.image_sha256).toBe(sha256(GIF));

    // Bytes changed behind the server's back: the ETag is still the recorded one, so nothing hashed them per request.
    await server.stored.write(imageKey(project.imageUrl), Buffer.alloc(PNG.length, 1));
    const cover = await api.request('HEAD', project.imageUrl, { token: owner.accessToken });
    expect(cover.headers.get('etag')).toBe(`"${sha256(PNG)}"`);
    const image = await api.request('GET', vibe.imageUrl, { token: owner.accessToken });
    expect(image.headers.get('etag')).toBe(`"${sha256(GIF)}"`);

    const replaced = await expectStatus(
      api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, body: form({}, { bytes: GIF, name: 'd.gif' }) }),
      200,
    );
    expect((await server.sql`select image_sha256 from projects where id = ${project.id}`)[0]!.image_sha256).toBe(sha256(GIF));
    expect((await api.request('GET', replaced.imageUrl, { token: owner.accessToken })).headers.get('etag')).toBe(`"${sha256(GIF)}"`);
    await expectStatus(api.request('PUT', `/api/vibes/${vibe.id}`, { token: owner.accessToken, body: form({}, { bytes: PNG, name: 'w.png' }) }), 200);
    expect((await server.sql`select image_sha256 from vibes where id = ${vibe.id}`)[0]!.image_sha256).toBe(sha256(PNG));

    await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { image: null } }), 200);
    await expectStatus(api.request('PUT', `/api/vibes/${vibe.id}`, { token: owner.accessToken, json: { image: null } }), 200);
    expect((await server.sql`select image_sha256 from projects where id = ${project.id}`)[0]!.image_sha256).toBeNull();
    expect((await server.sql`select image_sha256 from vibes where id = ${vibe.id}`)[0]!.image_sha256).toBeNull();
  });

  it('hashes an image stored before the sha256 was recorded once, on its first read, and records it', async () => {
    const project = await expectStatus(
      api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Older' }, { bytes: PNG, name: 'c.png' }) }),
      201,
    );
    const vibe = await expectStatus(
      api.request('POST', `/api/projects/${project.id}/vibes`, { token: owner.accessToken, body: form({ name: 'Older' }, { bytes: GIF, name: 'v.gif' }) }),
      201,
    );
    await server.sql`update projects set image_sha256 = null where id = ${project.id}`;
    await server.sql`update vibes set image_sha256 = null where id = ${vibe.id}`;

    for (const [url, bytes] of [[project.imageUrl, PNG], [vibe.imageUrl, GIF]] as const) {
      const first = await api.request('GET', url, { token: owner.accessToken });
      expect(first.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
    }
    const [projectRow] = await server.sql`select image_sha256 from projects where image = ${nameOf(project.imageUrl)}`;
    const [vibeRow] = await server.sql`select image_sha256 from vibes where image = ${nameOf(vibe.imageUrl)}`;
    expect(projectRow!.image_sha256).toBe(sha256(PNG));
    expect(vibeRow!.image_sha256).toBe(sha256(GIF));
  });
});

describe('delete removes images', () => {
  it('deleting a project removes its cover and its vibes’ images; deleting a vibe removes its image', async () => {
    const project = await expectStatus(
      api.request('POST', '/api/projects', { token: owner.accessToken, body: form({ name: 'Doomed' }, { bytes: PNG, name: 'p.png' }) }),
      201,
    );
    const vibes = [];
    for (const name of ['One', 'Two']) {
      vibes.push(
        await expectStatus(
          api.request('POST', `/api/projects/${project.id}/vibes`, { token: owner.accessToken, body: form({ name }, { bytes: GIF, name: 'v.gif' }) }),
          201,
        ),
      );
    }
    expect((await api.request('DELETE', `/api/vibes/${vibes[0].id}`, { token: owner.accessToken })).status).toBe(200);
    expect(await server.stored.exists(imageKey(vibes[0].imageUrl))).toBe(false);
    expect(await server.stored.exists(imageKey(vibes[1].imageUrl))).toBe(true);

    expect((await api.request('DELETE', `/api/projects/${project.id}`, { token: owner.accessToken })).status).toBe(200);
    expect(await server.stored.exists(imageKey(project.imageUrl))).toBe(false);
    expect(await server.stored.exists(imageKey(vibes[1].imageUrl))).toBe(false);
    expect((await api.request('GET', project.imageUrl, { token: owner.accessToken })).status).toBe(404);
  });
});
