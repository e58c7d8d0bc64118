/**
 * One composition root (src/composition.ts) for the server and its commands: the commands resolve the
 * repositories and services they use from it, so a new class is wired once, by its constructor, and adding
 * one never means editing a command.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const SOURCE = fileURLToPath(new URL('../src', import.meta.url));

/** The server's command-line commands: commands.ts and each feature's command.ts. */
function commandFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? commandFiles(join(dir, entry.name)) : entry.name === 'commands.ts' || entry.name === 'command.ts' ? [join(dir, entry.name)] : [],
  );
}

it('the commands build no repository, service or store wrapper by hand: they resolve them from the composition root', () => {
  const files = commandFiles(SOURCE);
  expect(files.map((file) => file.slice(SOURCE.length))).toEqual(expect.arrayContaining(['/commands.ts', '/storage-migration/command.ts']));
  const wired = files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => (/\bnew [A-Z]\w*(Repository|Service|Cache|Disk|Passwords)\b/.test(line) ? [`${file.slice(SOURCE.length)}:${index + 1}: ${line.trim()}`] : [])),
  );
  expect(wired).toEqual([]);
});
