import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
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
