import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { expect, it } from 'vitest';
import { createTestDatabase, startTestServer } from './support/server.js';

it('applies every migration exactly once when two instances start on one database at once', async () => {
  const databaseUrl = await createTestDatabase();
  const servers = await Promise.all([startTestServer({ DATABASE_URL: databaseUrl }), startTestServer({ DATABASE_URL: databaseUrl })]);
  try {
    const files = (await readdir(fileURLToPath(new URL('../migrations', import.meta.url)))).filter((f) => f.endsWith('.sql'));
    const rows = await servers[0].sql<{ version: string }[]>`select version from schema_migrations order by version`;
    expect(rows.map((r) => r.version)).toEqual(files.sort());
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});

it('009 renames duplicate vibe and cut names already stored, then keeps names unique', async () => {
  const databaseUrl = await createTestDatabase();
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    // The database as the migrations before 009 leave it, with the duplicates they allowed.
    const dir = fileURLToPath(new URL('../migrations', import.meta.url));
    const earlier = (await readdir(dir)).filter((f) => /^\d{3}_.+\.sql$/.test(f) && f < '009').sort();
    await sql`create table schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
    for (const file of earlier) {
      await sql.unsafe(await readFile(path.join(dir, file), 'utf8'));
      await sql`insert into schema_migrations (version) values (${file})`;
    }
    const [project] = await sql`insert into projects (name) values ('Band') returning id`;
    const [other] = await sql`insert into projects (name) values ('Other') returning id`;
    const vibe = async (projectId: string, name: string, position: number, age: number) =>
      (await sql`insert into vibes (project_id, name, position, created_at)
                 values (${projectId}, ${name}, ${position}, now() - make_interval(mins => ${age})) returning id`)[0]!.id as string;
    const intro = await vibe(project!.id, 'Intro', 0, 50);
    const introLower = await vibe(project!.id, 'intro', 1, 40);
    const taken = await vibe(project!.id, 'Intro (2)', 2, 30);
    const introUpper = await vibe(project!.id, 'INTRO', 3, 20);
    const long = 'L'.repeat(200);
    const longFirst = await vibe(project!.id, long, 4, 10);
    const longSecond = await vibe(project!.id, long, 5, 5);
    const elsewhere = await vibe(other!.id, 'Intro', 0, 1);
    const cut = async (vibeId: string, name: string, age: number) =>
      (await sql`insert into cuts (vibe_id, project_id, name, created_at)
                 select id, project_id, ${name}, now() - make_interval(mins => ${age}) from vibes where id = ${vibeId} returning id`)[0]!.id as string;
    const take = await cut(intro, 'Take', 3);
    const takeAgain = await cut(intro, 'take', 2);
    const otherVibesTake = await cut(introLower, 'Take', 1);

    const server = await startTestServer({ DATABASE_URL: databaseUrl });
    try {
      const names = async (table: 'vibes' | 'cuts') =>
        Object.fromEntries((await sql<{ id: string; name: string }[]>`select id, name from ${sql(table)}`).map((r) => [r.id, r.name]));
      expect(await names('vibes')).toEqual({
        [intro]: 'Intro',
        [introLower]: 'intro (3)',
        [taken]: 'Intro (2)',
        [introUpper]: 'INTRO (4)',
        [longFirst]: long,
        [longSecond]: `${'L'.repeat(196)} (2)`,
        [elsewhere]: 'Intro',
      });
      expect(await names('cuts')).toEqual({ [take]: 'Take', [takeAgain]: 'take (2)', [otherVibesTake]: 'Take' });
      await expect(sql`insert into vibes (project_id, name, position) values (${project!.id}, 'iNtRo', 6)`).rejects.toThrow(/vibes_project_name_key/);
      await expect(sql`insert into cuts (vibe_id, project_id, name) values (${intro}, ${project!.id}, 'TAKE')`).rejects.toThrow(/cuts_vibe_name_key/);
    } finally {
      await server.close();
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
});

it('020 moves the entries of STEM files already analysed into stem_entries, keeping the first 100 on the file', async () => {
  const databaseUrl = await createTestDatabase();
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    const dir = fileURLToPath(new URL('../migrations', import.meta.url));
    const earlier = (await readdir(dir)).filter((f) => /^\d{3}_.+\.sql$/.test(f) && f < '020').sort();
    await sql`create table schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
    for (const file of earlier) {
      await sql.unsafe(await readFile(path.join(dir, file), 'utf8'));
      await sql`insert into schema_migrations (version) values (${file})`;
    }
    const [user] = await sql`insert into users (email, name, password_hash, role) values ('a@example.com', 'A', 'x', 'ADMIN') returning id`;
    const [project] = await sql`insert into projects (name) values ('Band') returning id`;
    const [vibe] = await sql`insert into vibes (project_id, name, position) values (${project!.id}, 'Vibe', 0) returning id`;
    const [cut] = await sql`insert into cuts (vibe_id, project_id, name) values (${vibe!.id}, ${project!.id}, 'Cut') returning id`;
    const entries = Array.from({ length: 150 }, (_, i) => ({
      path: `stem-${i}.wav`,
      size: 1000 + i,
      audio: i % 2 === 0 ? { codec: 'pcm', durationMs: 1000, sampleRate: 48000, bitDepth: 24, channels: 2 } : null,
    }));
    const summary = { entryCount: 150, audioCount: 75, sampleRates: [48000], bitDepths: [24], longestMs: 1000, shortestMs: 1000, consistent: true };
    const fileId = randomUUID();
    await sql`
      insert into files (id, cut_id, project_id, name, extension, type, size, mime_type, sha256, uploaded_by, analysis, stems)
      values (${fileId}, ${cut!.id}, ${project!.id}, 'Stems', 'zip', 'STEM', 5000, 'application/zip', ${'0'.repeat(64)}, ${user!.id}, 'done',
              ${sql.json({ entries, summary })})`;

    const server = await startTestServer({ DATABASE_URL: databaseUrl });
    try {
      const [file] = await sql<{ stems: { entries: unknown[]; summary: unknown } }[]>`select stems from files where id = ${fileId}`;
      expect(file!.stems.entries).toEqual(entries.slice(0, 100));
      expect(file!.stems.summary).toEqual(summary);
      const rows = await sql<{ position: number; path: string; size: number; audio: unknown }[]>`
        select position, path, size::int, audio from stem_entries where file_id = ${fileId} order by position`;
      expect(rows.map(({ path: entryPath, size, audio }) => ({ path: entryPath, size, audio }))).toEqual(entries);
      expect(rows.map((row) => row.position)).toEqual(entries.map((_, i) => i));
    } finally {
      await server.close();
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
});
