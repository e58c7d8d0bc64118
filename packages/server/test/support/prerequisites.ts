/**
 * Whether a prerequisite of some tests that this machine may lack (ffmpeg, tmux, chromium, a keychain, the right
 * to mount a tmpfs) is there; `problem` says why not, null when it is. Tests install nothing: outside CI the tests
 * that need a missing one skip, saying why. In CI (CI=true), where .ci/run installs them all, a missing one throws
 * and fails the test file instead: a skip there would pass a run whose tests never ran.
 */
export function requirePrerequisite(name: string, problem: string | null): boolean {
  if (problem === null) return true;
  if (process.env.CI === 'true') throw new Error(`${name} is required in CI: ${problem}`);
  console.warn(`[tests that need ${name}] SKIPPED: ${problem}`);
  return false;
}
