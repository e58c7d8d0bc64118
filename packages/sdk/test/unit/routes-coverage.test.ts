import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BandClient } from '../../src/client.js';
import { ROUTES } from '../../src/contract/routes.js';

const sources = fileURLToPath(new URL('../../src/', import.meta.url));
const featureTables = path.join(sources, 'contract', 'routes');

/**
 * Routes a program has no use for, each for its reason: they answer a browser, or a protocol step the SDK
 * knows already. Every other route is one an SDK method calls.
 */
const NOT_FOR_PROGRAMS: Partial<Record<keyof typeof ROUTES, string>> = {
  home: 'the HTML page for people who open the server in a browser',
  sharePage: 'the HTML page of a share link, for people',
  sharePageScript: 'the script of the share page, loaded by the browser',
  invitePage: 'the HTML page of an invitation link, for people',
  idpCallback: "the identity provider's redirect back, followed by the browser",
  tusOptions: 'tus discovery: the SDK speaks the server’s tus 1.0.0 and its extensions as they are',
  mediaFile: 'what an <audio> element loads from File.url with the access_token cookie; programs use files.download',
  mediaImage: 'what an <img> loads from a cover or vibe image URL with the access_token cookie',
  mediaAvatar: 'what an <img> loads from avatarUrl with the access_token cookie',
  resetPage: "the page a password-reset mail links to, for people; programs use auth.resetPassword",
  resetPageSubmit: 'the form of that page, posted by the browser',
  unsubscribePage: "the page a notification mail's unsubscribe link opens, for people; programs use notifications.update",
  unsubscribe: "RFC 8058 one-click unsubscribe, posted by mail clients and that page's button",
};

/** The SDK's own sources (the contract, which declares the routes, left out), as one text. */
async function sdkSources(): Promise<string> {
  const files = (await readdir(sources, { recursive: true })).filter((file) => file.endsWith('.ts') && !file.startsWith(`contract${path.sep}`));
  return (await Promise.all(files.map((file) => readFile(path.join(sources, file), 'utf8')))).join('\n');
}

describe('the route declarations', () => {
  it('are each in one feature table, and the table assembles them all', async () => {
    // A name in two tables would leave the earlier declaration out of ROUTES without a word.
    const names: string[] = [];
    for (const file of (await readdir(featureTables)).filter((name) => name.endsWith('.ts'))) {
      const tables = (await import(path.join(featureTables, file))) as Record<string, Record<string, unknown>>;
      for (const [exported, table] of Object.entries(tables)) {
        if (!exported.endsWith('_ROUTES') && !exported.endsWith('_PAGES')) continue;
        for (const [name, route] of Object.entries(table)) {
          expect(ROUTES[name as keyof typeof ROUTES], `${file} ${name}`).toBe(route);
          names.push(name);
        }
      }
    }
    expect(names.sort()).toEqual(Object.keys(ROUTES).sort());
  });

  it('each have an SDK method that calls them, but for the routes that are not for programs', async () => {
    const text = await sdkSources();
    const called = (name: string) => new RegExp(`\\bROUTES\\.${name}\\b`).test(text);
    const missing = Object.entries(ROUTES)
      .filter(([name, route]) => !(name in NOT_FOR_PROGRAMS) && !called(name) && !('sdk' in route))
      .map(([name, route]) => `${name}: ${route.method} ${route.path}`);
    expect(missing).toEqual([]);
  });

  it('that name their SDK method (`sdk`) have it on the client, made from the declaration and called nowhere by hand', async () => {
    const text = await sdkSources();
    const client = new BandClient({ baseUrl: 'http://127.0.0.1:9' }) as unknown as Record<string, Record<string, unknown>>;
    const declared = Object.entries(ROUTES).flatMap(([name, route]) => ('sdk' in route ? [[name, route.sdk as string] as const] : []));
    expect(declared.length).toBeGreaterThan(0);
    for (const [name, sdk] of declared) {
      const [resource, method] = sdk.split('.') as [string, string];
      expect(typeof client[resource]?.[method], `${name}: client.${sdk}`).toBe('function');
      expect(new RegExp(`\\bROUTES\\.${name}\\b`).test(text), `${name} is also called by hand`).toBe(false);
    }
    // Two declarations cannot make one method: the later would replace the earlier without a word.
    expect(new Set(declared.map(([, sdk]) => sdk)).size).toBe(declared.length);
  });

  it('leave out only routes that exist and that no SDK method calls', async () => {
    const text = await sdkSources();
    for (const name of Object.keys(NOT_FOR_PROGRAMS)) {
      expect(ROUTES, name).toHaveProperty(name);
      expect(new RegExp(`\\bROUTES\\.${name}\\b`).test(text), name).toBe(false);
    }
  });

  it('are never spelled out as a path in the SDK: every call takes its path from them', async () => {
    // Code only: a comment may name a path as an example.
    const text = (await sdkSources()).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    const spelled = [...text.matchAll(/['"`](\/(?:api|share|invite|uploads)\/[^'"`\s]*)['"`]/g)].map((match) => match[1]);
    expect(spelled).toEqual([]);
  });
});
