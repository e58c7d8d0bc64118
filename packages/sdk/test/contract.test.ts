import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { extensionOf, fileTypeFor } from '../src/index.js';

const run = promisify(execFile);
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

/** The bare specifiers a built ES module and the chunks it imports (relatively) import. */
async function bareImportsOf(file: string, seen = new Set<string>()): Promise<Set<string>> {
  const bare = new Set<string>();
  if (seen.has(file)) return bare;
  seen.add(file);
  const source = await readFile(file, 'utf8');
  for (const [, specifier] of source.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
    if (specifier!.startsWith('.')) {
      for (const nested of await bareImportsOf(path.resolve(path.dirname(file), specifier!), seen)) bare.add(nested);
    } else {
      bare.add(specifier!);
    }
  }
  return bare;
}

describe('the upload rules shared with the server', () => {
  it('gives a name that starts with its only dot no extension, as the server does', () => {
    expect(extensionOf('.mp3')).toBe('');
    expect(fileTypeFor('.mp3')).toBeUndefined();
    expect(fileTypeFor('take.MP3')?.type).toBe('CUT');
    expect(fileTypeFor('.hidden.zip')?.type).toBe('STEM');
  });
});

// These read the BUILT package (dist/), as an application would: `pnpm test` builds before vitest runs.
describe('the built package', () => {
  it('does not load zod when required; the contract subpath does', async () => {
    const { stdout } = await run(process.execPath, [path.join(fixtures, 'zod-loaded.cjs')]);
    expect(JSON.parse(stdout)).toEqual({ afterSdk: false, afterContract: true });
  });

  it('imports no zod from its ES module entry; the contract subpath does', async () => {
    expect([...(await bareImportsOf(path.join(dist, 'index.js')))]).not.toContain('zod');
    expect([...(await bareImportsOf(path.join(dist, 'contract/index.js')))]).toContain('zod');
  });
});
