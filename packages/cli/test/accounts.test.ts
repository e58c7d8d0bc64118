import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runServerCommand } from '../../server/test/support/process.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { type CliUser, cliUser, credentialFile, registerWithCli } from './support/cli.js';

vi.setConfig({ testTimeout: 90_000 });

const PNG = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(64, 7)]);

let server: TestServer;
const users: CliUser[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const user of users) await user.cleanup();
  await server?.close();
});

async function newUser(email: string): Promise<CliUser> {
  const user = await cliUser(server.url);
  users.push(user);
  await registerWithCli(user, email);
  return user;
}

describe('band auth profile', () => {
  it('changes the name and the avatar, shows them, and removes the avatar', async () => {
    const kai = await newUser('kai@example.com');
    const avatar = path.join(kai.home, 'me.png');
    await writeFile(avatar, PNG);
    const changed = await kai.band(['auth', 'profile', '--name', 'Kai K.', '--avatar', avatar]);
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(changed.stdout).toContain('Name:   Kai K. <kai@example.com>');
    expect(changed.stdout).toMatch(/Avatar: \/uploads\/avatars\/[0-9a-f-]{36}\.png/);

    const shown = JSON.parse((await kai.band(['auth', 'profile', '--json'])).stdout);
    expect(shown).toMatchObject({ name: 'Kai K.', avatarUrl: expect.stringMatching(/^\/uploads\/avatars\//) });

    const removed = await kai.band(['auth', 'profile', '--remove-avatar']);
    expect(removed.stdout).toContain('Avatar: none');

    const both = await kai.band(['auth', 'profile', '--avatar', avatar, '--remove-avatar']);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('--avatar and --remove-avatar exclude each other');
  });

  it('reads an --avatar path relative to the directory band runs in', async () => {
    const ivo = await newUser('ivo@example.com');
    await writeFile(path.join(ivo.home, 'me.png'), PNG);
    const changed = await ivo.band(['auth', 'profile', '--avatar', 'me.png'], { cwd: ivo.home });
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(changed.stdout).toMatch(/Avatar: \/uploads\/avatars\/[0-9a-f-]{36}\.png/);
  });
});

describe('band auth password', () => {
  it('reads the current and the new password from two lines of stdin; the new one logs in', async () => {
    const lea = await newUser('lea@example.com');
    const changed = await lea.band(['auth', 'password', '--password-stdin'], { input: 'correct horse battery\nstaple battery horse\n' });
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(changed.stdout).toContain('Password changed; your other sessions have ended');
    expect((await lea.band(['auth', 'status'])).exitCode).toBe(0);

    const old = await lea.band(['auth', 'login', '--email', 'lea@example.com', '--password-stdin'], { input: 'correct horse battery\n' });
    expect(old.exitCode).toBe(4);
    const fresh = await lea.band(['auth', 'login', '--email', 'lea@example.com', '--password-stdin'], { input: 'staple battery horse\n' });
    expect(fresh.exitCode, fresh.stderr).toBe(0);
  });

  it('lists the personal access tokens that still work, and --revoke-tokens revokes them and says how many', async () => {
    const ida = await newUser('ida@example.com');
    for (const name of ['ci', 'backup-job']) {
      const created = await ida.band(['token', 'create', name, '--expires', '30d']);
      expect(created.exitCode, created.stderr).toBe(0);
    }
    const kept = await ida.band(['auth', 'password', '--password-stdin'], { input: 'correct horse battery\nsecond long password\n' });
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(kept.stdout).toContain('These personal access tokens still work (band auth password --revoke-tokens ends them all');
    expect(kept.stdout).toMatch(/backup-job\s+bcp_/);
    expect(kept.stdout).toMatch(/ci\s+bcp_/);

    const revoked = await ida.band(['auth', 'password', '--revoke-tokens', '--password-stdin'], { input: 'second long password\nthird long password\n' });
    expect(revoked.exitCode, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('Password changed; your other sessions have ended; revoked 2 personal access tokens');
    expect(JSON.parse((await ida.band(['token', 'list', '--json'])).stdout)).toEqual([]);
  });

  it('refuses one line, and asks for --password-stdin off a terminal', async () => {
    const max = await newUser('max@example.com');
    const oneLine = await max.band(['auth', 'password', '--password-stdin'], { input: 'correct horse battery\n' });
    expect(oneLine.exitCode).toBe(2);
    expect(oneLine.stderr).toContain('two lines');
    const noTerminal = await max.band(['auth', 'password']);
    expect(noTerminal.exitCode).toBe(2);
    expect(noTerminal.stderr).toContain('--password-stdin is required when not on a terminal');
  });
});

describe('band auth login after an admin reset the password', () => {
  it('says the one-time password must be replaced, and band auth password replaces it', async () => {
    const noa = await newUser('noa@example.com');
    const reset = await runServerCommand(['reset-password', 'noa@example.com'], server.env);
    expect(reset.code, reset.stderr).toBe(0);
    const oneTime = reset.stdout.trim();

    const login = await noa.band(['auth', 'login', '--email', 'noa@example.com', '--password-stdin'], { input: `${oneTime}\n` });
    expect(login.exitCode).toBe(4);
    expect(login.stderr).toContain('one-time password');
    expect(login.stderr).toContain('band auth password');
    const blocked = await noa.band(['project', 'list']);
    expect(blocked.exitCode).not.toBe(0);

    const changed = await noa.band(['auth', 'password', '--password-stdin'], { input: `${oneTime}\nmy own password now\n` });
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect((await noa.band(['project', 'list'])).exitCode).toBe(0);
  });
});

describe('band auth delete-account', () => {
  it('refuses without --yes off a terminal, then deletes the account and forgets its credentials', async () => {
    const ola = await newUser('ola@example.com');
    const refused = await ola.band(['auth', 'delete-account', '--password-stdin'], { input: 'correct horse battery\n' });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing without --yes (not a terminal)');

    const wrong = await ola.band(['--yes', 'auth', 'delete-account', '--password-stdin'], { input: 'not my password\n' });
    expect(wrong.exitCode).toBe(4);

    const deleted = await ola.band(['--yes', 'auth', 'delete-account', '--password-stdin'], { input: 'correct horse battery\n' });
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`Deleted the account ola@example.com on ${server.url}`);
    await expect(stat(credentialFile(ola, server.url))).rejects.toThrow();
    const login = await ola.band(['auth', 'login', '--email', 'ola@example.com', '--password-stdin'], { input: 'correct horse battery\n' });
    expect(login.exitCode).toBe(4);
  });
});
