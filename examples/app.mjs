// An application built on the SDK: signs in once, keeps its tokens in a file (BAND_TOKEN_FILE, default
// bandcollab-example-tokens.json in the temporary directory; refreshed pairs included), and prints the
// projects you belong to with their vibes, cuts and files, then your storage use.
//
//   BAND_API_URL=http://localhost:3000 BAND_EMAIL=ada@example.com BAND_PASSWORD=… node app.mjs
import { chmod, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BandApiError, BandClient, BandNetworkError, isAuthError } from '@bandcollab/sdk';

const baseUrl = process.env.BAND_API_URL ?? 'http://localhost:3000';
const tokenFile = process.env.BAND_TOKEN_FILE ?? path.join(os.tmpdir(), 'bandcollab-example-tokens.json');

async function savedTokens() {
  try {
    return JSON.parse(await readFile(tokenFile, 'utf8'));
  } catch {
    return {};
  }
}

async function saveTokens({ accessToken, refreshToken }) {
  await writeFile(tokenFile, JSON.stringify({ accessToken, refreshToken }), { mode: 0o600 });
  // The mode above applies only when the file is created.
  await chmod(tokenFile, 0o600);
}

const band = new BandClient({ baseUrl, ...(await savedTokens()), onTokens: saveTokens, userAgent: 'bandcollab-example-app' });

async function signedIn() {
  if (band.sessionTokens.refreshToken) {
    try {
      return await band.auth.me();
    } catch (error) {
      if (!isAuthError(error)) throw error;
    }
  }
  const email = process.env.BAND_EMAIL;
  const password = process.env.BAND_PASSWORD;
  if (!email || !password) throw new Error('Set BAND_EMAIL and BAND_PASSWORD to sign in');
  return (await band.auth.login({ email, password })).user;
}

const size = (bytes) => (bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);

try {
  const me = await signedIn();
  console.log(`Signed in to ${baseUrl} as ${me.name} <${me.email}>\n`);
  const projects = await band.projects.list();
  if (projects.length === 0) console.log('No projects yet.');
  for (const summary of projects) {
    const project = await band.projects.get(summary.id);
    console.log(`${project.name} (${project.role}, ${project.memberCount} member${project.memberCount === 1 ? '' : 's'})`);
    for (const vibe of project.vibes) {
      console.log(`  ${vibe.position + 1}. ${vibe.name}`);
      for (const cut of vibe.cuts) {
        console.log(`     - ${cut.name}: ${cut.files.map((f) => `${f.name} [${f.type}, ${size(f.size)}]`).join(', ') || 'no files'}`);
      }
    }
  }
  const storage = await band.files.storage();
  console.log(`\nYour uploads: ${storage.fileCount} files, ${size(storage.totalSize)}`);
} catch (error) {
  if (error instanceof BandApiError) console.error(`Error: ${error.detail} [${error.code}, request ${error.requestId}]`);
  else if (error instanceof BandNetworkError) console.error(`Cannot reach ${baseUrl}: ${error.message}`);
  else console.error(`Error: ${error.message}`);
  process.exitCode = 1;
}
