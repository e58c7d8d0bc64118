import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Returns the secret kept in `dataDir/<name>`, generating it on first use. The file is 0600 and is written
 * with O_EXCL so two instances starting at once agree on one value.
 */
export async function loadOrCreateSecret(dataDir: string, name: string): Promise<string> {
  const file = path.join(dataDir, name);
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  try {
    await writeFile(file, randomBytes(48).toString('base64url'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return (await readFile(file, 'utf8')).trim();
}
