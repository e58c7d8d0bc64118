import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SmallDisk {
  dir: string;
  unmount(): Promise<void>;
}

/**
 * A tmpfs of `sizeMiB` mounted on a new directory, for a DATA_DIR whose free space the test controls.
 * Answers why not when it cannot be mounted (not root, no mount permission in a container).
 */
export async function mountSmallDisk(sizeMiB: number): Promise<SmallDisk | string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-small-disk-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    return `cannot mount a ${sizeMiB} MiB tmpfs here: ${(error as Error).message.trim()}`;
  }
  return {
    dir,
    async unmount() {
      await run('umount', [dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
