// A profile's settings: the server it uses by default and its logins by server origin, kept in conf's file
// in the config directory.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { StoreKind } from './credentials.js';
import { usageError } from './exit-codes.js';
import type { Io } from './io.js';

/**
 * The settings of every profile, in conf's file (`config.json`: one JSON object by profile name). Commands read
 * it here and save through conf, which is loaded only to save: it imports ajv and semver, for schemas and
 * migrations band does not use, about 20 ms of a command such as `band project list` that only reads.
 */
export class SettingsFile {
  constructor(private readonly dir: string) {}

  read(profile: string): ProfileSettings {
    let all: Record<string, ProfileSettings>;
    try {
      all = JSON.parse(readFileSync(path.join(this.dir, 'config.json'), 'utf8')) as Record<string, ProfileSettings>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    // A profile named like an Object.prototype key ("constructor") has no settings until it saves some.
    return Object.hasOwn(all, profile) ? all[profile]! : {};
  }

  async write(profile: string, settings: ProfileSettings): Promise<void> {
    const { default: Conf } = await import('conf');
    const conf = new Conf<Record<string, ProfileSettings>>({
      projectName: 'band',
      cwd: this.dir,
      configName: 'config',
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
    });
    conf.set(profile, settings);
  }
}

export interface ProfileUser {
  id: string;
  email: string;
  name: string;
}

/** A login on one server: who, and where its tokens are. */
export interface Login {
  credentialStore: StoreKind;
  user: ProfileUser;
}

export interface ProfileSettings {
  /** The server commands go to when neither --api-url nor BAND_API_URL names one: the last one logged in to. */
  apiUrl?: string;
  /** By server origin. */
  logins?: Record<string, Login>;
  /** Why the last login fell back from the OS keychain to a file, as the user was told (not told again). */
  keychainFallback?: string;
}

/** BAND_CONFIG_DIR, else $XDG_CONFIG_HOME/band, else ~/.config/band. */
export function configDirectory(io: Io): string {
  if (io.env.BAND_CONFIG_DIR) return path.resolve(io.cwd, io.env.BAND_CONFIG_DIR);
  const base = io.env.XDG_CONFIG_HOME || path.join(io.homeDir, '.config');
  return path.join(base, 'band');
}

/** The loopback addresses people use for a server on their own machine, one of them as often as the other. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * scheme://host[:port] of an http(s) address, as URL normalises it: lower case, no default port; a loopback
 * address is `localhost`, so a login made at http://127.0.0.1:3000 is the one of http://localhost:3000.
 */
export function originOf(apiUrl: string): string {
  const url = URL.canParse(apiUrl) ? new URL(apiUrl) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw usageError(`the server address must be an http or https URL, not "${apiUrl}"`);
  if (LOOPBACK_HOSTS.has(url.hostname)) url.hostname = 'localhost';
  return url.origin;
}
