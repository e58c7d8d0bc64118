import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandApiError, type BandClient, BandClient as Client } from '../src/index.js';
import { PASSWORD, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
let siteAdmin: BandClient;

beforeAll(async () => {
  server = await startTestServer();
  siteAdmin = (await registeredClient(server.url)).client; // the first account: the site ADMIN
});
afterAll(() => server?.close());

describe('admin', () => {
  it('reports storage by user and by project with the largest files, for a site ADMIN only', async () => {
    const { client: member, email } = await registeredClient(server.url);
    const project = await member.projects.create({ name: 'Loud' });
    const vibe = await member.vibes.create(project.id, { name: 'Verse' });
    const cut = await member.cuts.create(vibe.id, { name: 'Take' });
    await member.files.upload({ cutId: cut.id, file: Buffer.concat([Buffer.from('ID3'), Buffer.alloc(4096)]), filename: 'a.mp3' });

    const byUser = await siteAdmin.admin.storage({ by: 'user', top: 1 });
    if (byUser.by !== 'user') throw new Error('expected rows by user');
    expect(byUser.users[0]).toMatchObject({ user: { email, active: true }, totalSize: 4099, breakdown: { audio: { size: 4099, count: 1 } }, quota: null });
    expect(byUser.largestFiles).toMatchObject([{ name: 'a.mp3', size: 4099, project: { id: project.id, name: 'Loud' } }]);
    const byProject = await siteAdmin.admin.storage({ by: 'project' });
    expect(byProject).toMatchObject({ by: 'project', projects: [{ project: { id: project.id }, totalSize: 4099 }], largestFiles: [] });

    const refused = await member.admin.users().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BandApiError);
    expect((refused as BandApiError).code).toBe('FORBIDDEN');
  });

  it('deactivates an account (its client is signed out, sign-in refused) and activates it again', async () => {
    const { client: member, email } = await registeredClient(server.url);
    const me = await member.auth.me();
    expect((await siteAdmin.admin.users()).find((user) => user.id === me.id)).toMatchObject({ email, active: true });

    expect(await siteAdmin.admin.setActive(me.id, false)).toMatchObject({ id: me.id, active: false });
    await expect(member.auth.me()).rejects.toMatchObject({ status: 401 });
    const again = new Client({ baseUrl: server.url });
    await expect(again.auth.login({ email, password: PASSWORD })).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN', detail: expect.stringContaining('deactivated') });

    expect(await siteAdmin.admin.setActive(me.id, true)).toMatchObject({ active: true, deactivatedAt: null });
    await again.auth.login({ email, password: PASSWORD });
    expect((await again.auth.me()).id).toBe(me.id);
  });
});
