// The real OS keychain: a private D-Bus session with gnome-keyring's Secret Service (Debian packages
// dbus and gnome-keyring, installed by .ci/run), which @napi-rs/keyring talks to.
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { stat, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePrerequisite } from '../../server/test/support/prerequisites.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { BAND, type CliUser, cliUser, credentialFile } from './support/cli.js';

const cliDir = path.dirname(path.dirname(BAND));

function missingPrerequisite(): string | null {
  try {
    createRequire(path.join(cliDir, 'package.json'))('@napi-rs/keyring');
  } catch (error) {
    return `@napi-rs/keyring cannot load here (${(error as Error).message.split('\n')[0]})`;
  }
  for (const tool of ['dbus-run-session', 'gnome-keyring-daemon']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed`;
  }
  return null;
}

const hasKeychain = requirePrerequisite('an OS keychain', missingPrerequisite());

describe.skipIf(!hasKeychain)('credentials in the OS keychain (dbus-run-session + gnome-keyring)', () => {
  let server: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    server = await startTestServer();
    user = await cliUser(server.url);
  });
  afterAll(async () => {
    await user?.cleanup();
    await server?.close();
  });

  it('stores the refresh token in the keychain (no file, no notice), uses it, and removes it at logout', async () => {
    const script = path.join(user.home, 'session.sh');
    const readSecret = `node -e "import('@napi-rs/keyring').then(async (k) => console.log('SECRET=' + ((await new k.AsyncEntry('bandcollab', 'default@${server.url.replace('127.0.0.1', 'localhost')}').getPassword()) ?? 'none').slice(0, 16)))"`;
    await writeFile(
      script,
      [
        'set -e',
        'printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null',
        `printf 'correct horse battery\\n' | node ${BAND} auth register --email kim@example.com --name Kim --password-stdin`,
        `node ${BAND} auth status`,
        // Another profile on the same server has no login: its keychain account is another.
        `node ${BAND} --profile other project list || echo "OTHER_ORIGIN_EXIT=$?"`,
        `node ${BAND} project create Keys --json >/dev/null`,
        `(cd ${cliDir} && ${readSecret})`,
        `node ${BAND} auth logout`,
        `(cd ${cliDir} && ${readSecret})`,
      ].join('\n'),
    );
    const { stdout, stderr } = await promisify(execFile)('dbus-run-session', ['--', 'sh', script], {
      env: { ...user.env, DISPLAY: '' },
      timeout: 60_000,
    });
    expect(stderr).not.toContain('no OS keychain');
    expect(stdout).toContain('(credentials in the OS keychain)');
    expect(stdout).toContain('Credentials: the OS keychain');
    expect(stdout).toContain('OTHER_ORIGIN_EXIT=4');
    const secrets = [...stdout.matchAll(/^SECRET=(.*)$/gm)].map((match) => match[1]);
    expect(secrets[0]).toMatch(/^\{"accessToken":/);
    expect(secrets[1]).toBe('none');
    await expect(stat(path.join(user.home, '.config/band/credentials'))).rejects.toThrow();
  });

  it('falls back to the 0600 file with a one-line notice when the keychain is not reachable', async () => {
    const result = await user.bandProcess(['auth', 'login', '--email', 'kim@example.com', '--password-stdin'], {
      input: 'correct horse battery\n',
      env: { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' },
    });
    expect(result.exitCode).toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^band: no OS keychain \(.+\); storing credentials in .*default@http%3A%2F%2Flocalhost%3A\d+\.json \(mode 0600\); band says this once$/m);
    expect((await stat(credentialFile(user, server.url))).mode & 0o777).toBe(0o600);
    // The next login on the same machine falls back for the same reason, and says nothing.
    const again = await user.bandProcess(['auth', 'login', '--email', 'kim@example.com', '--password-stdin'], {
      input: 'correct horse battery\n',
      env: { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' },
    });
    expect(again.exitCode).toBe(0);
    expect(again.stderr).not.toContain('no OS keychain');
  });

  it('gives up on a session bus that takes the connection and never answers, and falls back to the file', async () => {
    // The keychain module connects to D-Bus synchronously: on band's main thread this would block it for ever.
    const busPath = path.join(user.home, 'silent-bus.sock');
    const connections = new Set<Socket>();
    const silentBus = createServer((socket) => connections.add(socket)).listen(busPath);
    await once(silentBus, 'listening');
    try {
      const started = Date.now();
      const result = await user.bandProcess(['auth', 'login', '--email', 'kim@example.com', '--password-stdin'], {
        input: 'correct horse battery\n',
        env: { DBUS_SESSION_BUS_ADDRESS: `unix:path=${busPath}` },
      });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/^band: no OS keychain \(the OS keychain did not answer within 3 s\); storing credentials in .* \(mode 0600\); band says this once$/m);
      expect(connections.size).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      for (const socket of connections) socket.destroy();
      silentBus.close();
    }
  });
});
