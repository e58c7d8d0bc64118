import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandApiError, BandClient, invitationToken } from '../src/index.js';
import { PASSWORD, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
let owner: BandClient;
let ownerId: string;

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(64)]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(64)]);

beforeAll(async () => {
  server = await startTestServer();
  const registered = await registeredClient(server.url);
  owner = registered.client;
  ownerId = registered.user.id;
});
afterAll(() => server?.close());

describe('projects', () => {
  it('create (JSON and multipart with a cover), list, get, update, delete', async () => {
    const plain = await owner.projects.create({ name: 'Plain', description: null });
    expect(plain).toMatchObject({ name: 'Plain', description: null, imageUrl: null, memberCount: 1, role: 'ADMIN' });

    const covered = await owner.projects.create({ name: 'Covered', description: 'With art', image: PNG });
    expect(covered.imageUrl).toMatch(/^\/uploads\/images\/.+\.png$/);

    const list = await owner.projects.list();
    expect(list.map((p) => p.id)).toEqual([covered.id, plain.id]);

    const renamed = await owner.projects.update(plain.id, { name: 'Renamed', description: 'Now described' });
    expect(renamed).toMatchObject({ id: plain.id, name: 'Renamed', description: 'Now described', updatedAt: expect.any(String) });

    const withCover = await owner.projects.update(plain.id, { image: GIF, description: null });
    expect(withCover).toMatchObject({ name: 'Renamed', description: null, imageUrl: expect.stringMatching(/\.gif$/) });
    expect((await owner.projects.update(plain.id, { image: null })).imageUrl).toBeNull();

    const detail = await owner.projects.get(plain.id);
    expect(detail).toMatchObject({ id: plain.id, name: 'Renamed', vibes: [], invitations: [] });
    expect(detail.members).toEqual([expect.objectContaining({ userId: ownerId, role: 'ADMIN' })]);

    expect(await owner.projects.delete(plain.id)).toEqual({ id: plain.id, deleted: true, trashedUntil: expect.any(String) });
    await expect(owner.projects.get(plain.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('refuses an oversized cover before sending it', async () => {
    const error = await owner.projects.create({ name: 'Big', image: Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]) }).catch((e) => e);
    expect(error).toBeInstanceOf(BandApiError);
    expect(error).toMatchObject({ status: 413, code: 'FILE_TOO_LARGE', requestId: null });
  });

  it('invite, invitations.get and accept (token or URL), revokeInvitation, updateMember, removeMember (and leaving)', async () => {
    const project = await owner.projects.create({ name: 'Band' });
    const { client: guest, user: guestUser, email } = await registeredClient(server.url);

    const forGuest = await owner.projects.invite(project.id, { email, role: 'MEMBER' });
    expect(forGuest).toMatchObject({ status: 'invited', invitation: { email, role: 'MEMBER' }, inviteUrl: expect.stringMatching(/\/invite\/[\w-]{43}$/) });
    expect(await guest.invitations.get(forGuest.inviteUrl)).toEqual({
      projectName: 'Band',
      invitedBy: { name: expect.any(String) },
      role: 'MEMBER',
      expiresAt: forGuest.invitation.expiresAt,
    });
    const accepted = await guest.invitations.accept(forGuest.inviteUrl);
    expect(accepted).toMatchObject({ projectId: project.id, member: { userId: guestUser.id, role: 'MEMBER' } });
    await expect(owner.projects.invite(project.id, { email, role: 'MEMBER' })).rejects.toMatchObject({ code: 'ALREADY_MEMBER' });

    const later = await owner.projects.invite(project.id, { email: 'later@example.com', role: 'ADMIN' });
    const token = later.inviteUrl.slice(later.inviteUrl.lastIndexOf('/') + 1);
    await expect(guest.invitations.accept(token)).rejects.toMatchObject({ status: 403, code: 'INVITATION_EMAIL_MISMATCH' });
    expect(await owner.projects.revokeInvitation(project.id, later.invitation.id)).toEqual({ id: later.invitation.id, deleted: true });
    await expect(owner.invitations.get(token)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect((await owner.projects.get(project.id)).invitations).toEqual([]);

    expect(await owner.projects.updateMember(project.id, guestUser.id, { role: 'ADMIN' })).toMatchObject({ role: 'ADMIN' });
    expect((await guest.projects.list()).map((p) => p.role)).toEqual(['ADMIN']);
    await expect(owner.projects.updateMember(project.id, ownerId, { role: 'MEMBER' })).resolves.toMatchObject({ role: 'MEMBER' });
    await expect(guest.projects.removeMember(project.id, guestUser.id)).rejects.toMatchObject({ status: 409, code: 'LAST_ADMIN' });

    expect(await guest.projects.removeMember(project.id, ownerId)).toMatchObject({ deleted: true });
    await expect(owner.projects.get(project.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('invitations', () => {
  it('auth.register with inviteToken registers and joins in one step', async () => {
    const project = await owner.projects.create({ name: 'Joined at sign-up' });
    const email = `sdk-invitee-${Date.now()}@example.com`;
    const { inviteUrl } = await owner.projects.invite(project.id, { email, role: 'ADMIN' });
    const invitee = new BandClient({ baseUrl: server.url });
    await invitee.auth.register({ email, password: PASSWORD, name: 'Invitee', inviteToken: invitationToken(inviteUrl) });
    expect(await invitee.projects.list()).toEqual([expect.objectContaining({ id: project.id, role: 'ADMIN' })]);
  });

  it('takes the token from a whole invite URL, with or without a trailing slash or query', () => {
    for (const input of ['abc_-1', ' https://band.example.com/invite/abc_-1 ', 'https://band.example.com/base/invite/abc_-1/', 'http://h/invite/abc_-1?from=mail#x']) {
      expect(invitationToken(input)).toBe('abc_-1');
    }
  });
});

describe('vibes and cuts', () => {
  it('create, get, update, reorder and delete vibes', async () => {
    const project = await owner.projects.create({ name: 'Vibes' });
    const first = await owner.vibes.create(project.id, { name: 'First' });
    const second = await owner.vibes.create(project.id, { name: 'Second', image: PNG });
    expect([first.position, second.position]).toEqual([0, 1]);
    await expect(owner.vibes.create(project.id, { name: ' FIRST ' })).rejects.toMatchObject({
      status: 409,
      code: 'NAME_TAKEN',
      detail: 'A vibe named "FIRST" already exists in this project',
    });
    expect(second.imageUrl).toMatch(/\.png$/);

    expect(await owner.vibes.update(first.id, { name: 'Opening', image: GIF })).toMatchObject({ name: 'Opening', imageUrl: expect.stringMatching(/\.gif$/) });
    expect((await owner.vibes.update(first.id, { image: null })).imageUrl).toBeNull();
    expect(await owner.vibes.get(first.id)).toMatchObject({ id: first.id, name: 'Opening', cuts: [] });

    const reordered = await owner.vibes.reorder([second.id, first.id]);
    expect(reordered.projectId).toBe(project.id);
    expect(reordered.vibes.map((v) => [v.id, v.position])).toEqual([[second.id, 0], [first.id, 1]]);
    await expect(owner.vibes.reorder([second.id])).rejects.toMatchObject({ status: 409, code: 'ORDER_CONFLICT' });

    expect(await owner.vibes.delete(first.id)).toEqual({ id: first.id, deleted: true, trashedUntil: expect.any(String) });
    expect((await owner.projects.get(project.id)).vibes.map((v) => v.id)).toEqual([second.id]);
  });

  it('create, get, update, move and delete cuts', async () => {
    const project = await owner.projects.create({ name: 'Cuts' });
    const vibe = await owner.vibes.create(project.id, { name: 'Verse' });
    const target = await owner.vibes.create(project.id, { name: 'Chorus' });
    const cut = await owner.cuts.create(vibe.id, { name: 'Take 1' });
    expect(cut).toMatchObject({ vibeId: vibe.id, projectId: project.id, name: 'Take 1' });
    expect(await owner.cuts.get(cut.id)).toMatchObject({ id: cut.id, files: [] });
    expect(await owner.cuts.update(cut.id, { name: 'Take 2' })).toMatchObject({ name: 'Take 2' });
    expect(await owner.cuts.move(cut.id, target.id)).toMatchObject({ vibeId: target.id });
    const again = await owner.cuts.create(target.id, { name: 'Take 3' });
    await expect(owner.cuts.update(again.id, { name: 'take 2' })).rejects.toMatchObject({ status: 409, code: 'NAME_TAKEN' });

    const elsewhere = await owner.vibes.create((await owner.projects.create({ name: 'Other' })).id, { name: 'X' });
    await expect(owner.cuts.move(cut.id, elsewhere.id)).rejects.toMatchObject({ status: 400, code: 'CROSS_PROJECT_MOVE' });

    expect(await owner.cuts.delete(cut.id)).toEqual({ id: cut.id, deleted: true, trashedUntil: expect.any(String) });
    await expect(owner.cuts.get(cut.id)).rejects.toMatchObject({ status: 404 });
  });

  it('never lets a path parameter escape its segment', async () => {
    await expect(owner.cuts.get('../projects')).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
