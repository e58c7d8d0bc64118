import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BandClient, type Comment, type ProjectEvent } from '../src/index.js';
import { eventually, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-sdk-comments-'));
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function fileOf(client: BandClient): Promise<string> {
  const project = await client.projects.create({ name: 'Summer EP' });
  const vibe = await client.vibes.create(project.id, { name: 'Opener' });
  const cut = await client.cuts.create(vibe.id, { name: 'Mix' });
  const file = await client.files.upload({ cutId: cut.id, file: Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00mix'), filename: 'mix.mp3' });
  return file.id;
}

describe('client.comments and client.reviews', () => {
  it('iterates every page of a file with many comments, once each, in order', async () => {
    const { client } = await registeredClient(server.url);
    const fileId = await fileOf(client);
    for (let at = 0; at < 23; at += 1) await client.comments.create(fileId, { body: `note ${at}`, atMs: (at * 7) % 23 });
    const seen: Comment[] = [];
    for await (const comment of client.comments.list(fileId, { limit: 5 })) seen.push(comment);
    expect(seen.map((c) => c.atMs)).toEqual([...Array(23).keys()]);
    let pages = 0;
    for await (const page of client.comments.list(fileId, { limit: 5 }).pages()) {
      pages += 1;
      expect(page.counts).toEqual({ open: 23, resolved: 0 });
    }
    expect(pages).toBe(5);
  });

  it('replies, resolves, edits, deletes, reviews, exports, and types the events', async () => {
    const { client, user } = await registeredClient(server.url);
    const fileId = await fileOf(client);
    const events: ProjectEvent[] = [];
    let hello = false;
    const subscription = client.events.subscribe({ onEvent: (event) => void events.push(event), onHello: () => void (hello = true) });
    await eventually(async () => hello);

    const top = await client.comments.create(fileId, { body: 'Kick too loud', atMs: 83_000 });
    const reply = await client.comments.create(fileId, { body: 'fixed in v2', parentId: top.id });
    expect((await client.comments.get(top.id)).replies?.map((r) => r.id)).toEqual([reply.id]);
    expect((await client.comments.resolve(top.id)).resolved?.by.id).toBe(user.id);
    expect((await client.comments.reopen(top.id)).resolved).toBeNull();
    expect((await client.comments.update(reply.id, { body: 'fixed in v3' })).edited).toBe(true);
    expect(await client.comments.delete(reply.id)).toEqual({ id: reply.id, deleted: true, trashedUntil: expect.any(String) });

    expect(await client.reviews.set(fileId, 'approved', 'ship it')).toMatchObject({ userId: user.id, state: 'approved', note: 'ship it' });
    expect((await client.reviews.list(fileId)).summary).toEqual({ approved: 1, changesRequested: 0, openComments: 1, ready: false });
    expect(await client.reviews.withdraw(fileId)).toEqual({ fileId, userId: user.id, deleted: true });

    const target = path.join(dir, 'markers.csv');
    const saved = await client.comments.export(fileId, { format: 'csv', offsetMs: 1000 }, { to: target });
    expect(saved.size).toBeGreaterThan(0);
    expect(await readFile(target, 'utf8')).toContain('0:01:24.000');

    await eventually(async () => events.some((event) => event.type === 'file.reviewed' && event.data.state === null));
    subscription.close();
    const created = events.find((event) => event.type === 'comment.created');
    expect(created?.type === 'comment.created' && created.data).toMatchObject({ commentId: top.id, fileId, atMs: 83_000, parentId: null });
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['comment.created', 'comment.resolved', 'comment.reopened', 'comment.updated', 'comment.trashed', 'file.reviewed']),
    );
  });
});
