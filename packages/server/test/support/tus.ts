// A tus upload's PATCH driven by hand, for the tests that hold one open, cut it (a killed process, a shutdown) or
// wait for it to run.
import type { Socket } from 'node:net';
import path from 'node:path';
import type { Sql } from 'postgres';
import { openSocket, requestHead } from './raw-http.js';

export const TUS = { 'tus-resumable': '1.0.0' };

/** Opens a PATCH that has sent `sent` of `total` bytes and keeps its connection open. */
export async function openPatch(baseUrl: string, token: string, url: string, offset: number, total: number, sent: Buffer): Promise<Socket> {
  const socket = await openSocket(baseUrl);
  socket.write(
    requestHead('PATCH', url, {
      authorization: `Bearer ${token}`,
      ...TUS,
      'content-type': 'application/offset+octet-stream',
      'upload-offset': offset,
      'content-length': total,
    }),
  );
  socket.write(sent);
  return socket;
}

/** Whether a PATCH of the upload is running: it holds the upload's advisory lock (the server's "tus!" class). */
export async function patchRunning(sql: Sql, url: string): Promise<boolean> {
  const held = await sql`select 1 from pg_locks where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())
    and classid = ${0x74757321}::bigint::oid
    and objid = (hashtext(${path.basename(url)})::bigint & 4294967295)::oid and objsubid = 2`;
  return held.length === 1;
}
