// The profiles' settings: one JSON object in `<config dir>/config.json` (mode 0600), keyed by profile, the
// file conf kept before. conf (with ajv and semver) was a quarter of `band project list`'s start-up for a
// get and a set on one small file; this reads it once per run and writes it whole, to a temporary file
// renamed over it, so a crash or a second band process never leaves half a file behind.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CliError } from './exit-codes.js';

export class SettingsFile<T> {
  private entries: Record<string, T> | undefined;

  constructor(readonly file: string) {}

  get(key: string): T | undefined {
    return Object.hasOwn(this.read(), key) ? this.read()[key] : undefined;
  }

  set(key: string, value: T): void {
    const entries = { ...this.read(), [key]: value };
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(temporary, `${JSON.stringify(entries, null, '\t')}\n`, { mode: 0o600 });
      renameSync(temporary, this.file);
    } finally {
      rmSync(temporary, { force: true });
    }
    this.entries = entries;
  }

  private read(): Record<string, T> {
    if (this.entries) return this.entries;
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      text = '{}';
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new CliError(`${this.file} is not a JSON object: fix or remove it (it holds band's settings, no secrets)`);
    }
    this.entries = parsed as Record<string, T>;
    return this.entries;
  }
}
