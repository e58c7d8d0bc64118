import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from '../../src/core/config.js';
import { renderSettings } from '../../src/operations/settings-reference.js';

const README = fileURLToPath(new URL('../../../../README.md', import.meta.url));

describe("the README's settings tables", () => {
  it('are the ones generated from core/config.ts (run `pnpm docs:settings` after changing a setting)', () => {
    const readme = readFileSync(README, 'utf8');
    const generated = /<!-- settings: generated from [^>]*-->\n([\s\S]*?)<!-- end of settings -->/.exec(readme);
    expect(generated, 'the settings markers in README.md').not.toBeNull();
    expect(generated![1]).toBe(`${renderSettings()}\n`);
  });

  it('list the defaults loadConfig takes', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: SETTINGS.PORT.default,
      host: SETTINGS.HOST.default,
      idleTimeoutSeconds: SETTINGS.IDLE_TIMEOUT_SECONDS.default,
      shutdownGraceSeconds: SETTINGS.SHUTDOWN_GRACE_SECONDS.default,
      minFreeDiskBytes: SETTINGS.MIN_FREE_DISK_MB.default * 1024 * 1024,
    });
    expect(renderSettings()).toContain('| `PORT` | `3000` | port to listen on |');
    expect(renderSettings()).toContain('| `MAX_AUDIO_BYTES`, `MAX_STEM_BYTES`, `MAX_IMAGE_BYTES` | contract limits |');
  });
});
