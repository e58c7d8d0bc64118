import { afterEach, describe, expect, it, vi } from 'vitest';
import { requirePrerequisite } from '../support/prerequisites.js';

describe('requirePrerequisite (a test prerequisite this machine may lack)', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('is met when nothing is missing, in CI or not', () => {
    vi.stubEnv('CI', 'true');
    expect(requirePrerequisite('tmux', null)).toBe(true);
  });

  it('skips, saying why, outside CI', () => {
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(requirePrerequisite('tmux', 'tmux is not installed')).toBe(false);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('tmux is not installed'));
  });

  it('fails in CI, where a skip would pass tests that never ran', () => {
    vi.stubEnv('CI', 'true');
    expect(() => requirePrerequisite('tmux', 'tmux is not installed')).toThrow('tmux is required in CI: tmux is not installed');
  });
});
