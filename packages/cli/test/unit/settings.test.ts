import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SettingsFile } from '../../src/settings.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'band-settings-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('SettingsFile', () => {
  it('keeps each profile in one 0600 JSON file, in a 0700 directory it creates, beside the other profiles', async () => {
    const file = path.join(dir, 'band', 'config.json');
    new SettingsFile<{ apiUrl: string }>(file).set('default', { apiUrl: 'http://a' });
    const later = new SettingsFile<{ apiUrl: string }>(file);
    later.set('staging', { apiUrl: 'http://b' });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ default: { apiUrl: 'http://a' }, staging: { apiUrl: 'http://b' } });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(new SettingsFile(file).get('default')).toEqual({ apiUrl: 'http://a' });
    expect(new SettingsFile(file).get('toString')).toBeUndefined();
    expect(new SettingsFile(path.join(dir, 'missing.json')).get('default')).toBeUndefined();
  });

  it('refuses a file that is not a JSON object, naming it', async () => {
    const file = path.join(dir, 'config.json');
    await writeFile(file, '[1,');
    expect(() => new SettingsFile(file).get('default')).toThrow(`${file} is not a JSON object`);
  });
});
