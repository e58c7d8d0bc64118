// Every write push and pull make in a session folder goes through here: the files pulled, their temporary
// copies, conflict copies, the trash and `.band/` itself. None may land outside the folder, whatever the folder
// holds (a symbolic link `Audio Files` to a sample library) or a server lists. Node has no openat(), so each
// write is made in directories checked one segment at a time with lstat (made one at a time where missing),
// into a name opened with O_NOFOLLOW | O_EXCL (never a link's target), and checked again once done: the
// directories must be the very ones checked (device and inode), and the file the one written.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, realpath, rename, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT } from '../exit-codes.js';

/** A directory as it was checked: a real directory (no link), and who it was, to tell whether it was swapped since. */
interface CheckedDirectory {
  path: string;
  dev: number;
  ino: number;
}

/** A file `create` made: the caller writes it through `handle` and closes it. */
export interface NewFile {
  handle: FileHandle;
  /** Its absolute path. */
  path: string;
}

/** Link errors of file systems without hard links (FAT, exFAT, some network shares). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);

const refused = (message: string) => new CliError(message, EXIT.error);

/** A folder relative path's segments; one that could leave the folder (absolute, `..`, an empty or `.` segment, `\`) is refused. */
function segments(relative: string): string[] {
  if (relative === '') return [];
  const parts = relative.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..' || /[\\\0]/.test(part))) throw refused(`${relative}: not a path inside the folder`);
  return parts;
}

const parentOf = (relative: string) => relative.slice(0, Math.max(0, relative.lastIndexOf('/')));

export class SafeFolder {
  private constructor(
    /** The folder's real path: links above it and at it are the user's own choice, resolved once. */
    readonly root: string,
    private readonly top: CheckedDirectory,
  ) {}

  /** The folder `dir` names, made first (with its parents) when `create`. */
  static async open(dir: string, { create }: { create: boolean }): Promise<SafeFolder> {
    if (create) await mkdir(dir, { recursive: true });
    const root = await realpath(dir);
    const stats = await lstat(root);
    if (!stats.isDirectory()) throw refused(`${dir} is not a folder`);
    return new SafeFolder(root, { path: root, dev: stats.dev, ino: stats.ino });
  }

  /** Where `relative` (POSIX, inside the folder) is: to read it, or to name it. */
  path(relative: string): string {
    return path.join(this.root, ...segments(relative));
  }

  /** The directory `relative` names, checked (and made where missing): its absolute path. */
  async directory(relative: string): Promise<string> {
    return (await this.directories(relative, true)).at(-1)!.path;
  }

  /**
   * A new file at `relative` (O_CREAT | O_EXCL | O_NOFOLLOW: EEXIST when anything is there, a link included),
   * its directories checked and made where missing, then checked again.
   */
  async create(relative: string): Promise<NewFile> {
    return (await this.createIn(relative)).file;
  }

  /**
   * Creates `relative` holding `text` only if nothing is there (false when something is): written whole to a new
   * file beside it, then hard-linked to its name, so no reader ever sees it empty or half written. Where the file
   * system has no hard links (FAT, exFAT), created with O_EXCL and then written.
   */
  async createWhole(relative: string, text: string): Promise<boolean> {
    const temporary = `${relative}.${randomBytes(6).toString('hex')}.tmp`;
    const { file, chain } = await this.createIn(temporary);
    try {
      await file.handle.writeFile(text);
      const written = await file.handle.stat();
      await file.handle.close();
      try {
        await link(file.path, this.path(relative));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (code === 'EEXIST') return false;
        if (!NO_HARD_LINKS.has(code)) throw error;
        return await this.createWritten(relative, text);
      }
      await this.recheck(chain, relative);
      const placed = await lstat(this.path(relative));
      if (placed.dev !== written.dev || placed.ino !== written.ino) throw refused(`${relative}: replaced while band wrote it`);
      return true;
    } finally {
      await file.handle.close().catch(() => undefined);
      await rm(file.path, { force: true });
    }
  }

  /** The text of the file `relative`, read through no link (ELOOP when it is one). */
  async readText(relative: string): Promise<string> {
    await this.directories(parentOf(relative), false);
    const handle = await open(this.path(relative), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  }

  /**
   * Moves the file `from` to `to`, both inside the folder (`to`'s directories made where missing). With
   * `replace`, a file at `to` is replaced (never a link: refused); without, `to` must be free (EEXIST).
   */
  async move(from: string, to: string, { replace }: { replace: boolean }): Promise<void> {
    const source = await this.directories(parentOf(from), false);
    const moved = await lstat(this.path(from));
    if (!moved.isFile()) throw refused(`${from}: not a file (band moves only files)`);
    const target = await this.directories(parentOf(to), true);
    const destination = this.path(to);
    if (replace) {
      if ((await lstat(destination).catch(() => null))?.isSymbolicLink()) throw refused(`${to} is a symbolic link (never followed, never replaced)`);
      await rename(this.path(from), destination);
    } else {
      await renameNoReplace(this.path(from), destination);
    }
    await this.recheck([...source, ...target], to);
    const placed = await lstat(destination);
    if (placed.dev !== moved.dev || placed.ino !== moved.ino) throw refused(`${to}: replaced while band moved it`);
  }

  /** Writes `text` to `relative` whole: into a new file beside it, then moved over it (a crash leaves the old or the new). */
  async writeWhole(relative: string, text: string): Promise<void> {
    const temporary = `${relative}.${randomBytes(6).toString('hex')}.tmp`;
    const file = await this.create(temporary);
    try {
      await file.handle.writeFile(text);
      await file.handle.close();
      await this.move(temporary, relative, { replace: true });
    } catch (error) {
      await file.handle.close().catch(() => undefined);
      await this.remove(temporary).catch(() => undefined);
      throw error;
    }
  }

  /** Removes the file or tree at `relative` (a link is removed, never followed), if there is one. */
  async remove(relative: string): Promise<void> {
    try {
      await this.directories(parentOf(relative), false);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    await rm(this.path(relative), { recursive: true, force: true });
  }

  /** `create`, also answering the directories checked. */
  private async createIn(relative: string): Promise<{ file: NewFile; chain: CheckedDirectory[] }> {
    const chain = await this.directories(parentOf(relative), true);
    const where = this.path(relative);
    const handle = await open(where, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
    try {
      await this.recheck(chain, relative);
      const [made, there] = await Promise.all([handle.stat(), lstat(where)]);
      if (made.dev !== there.dev || made.ino !== there.ino) throw refused(`${relative}: replaced while band wrote it`);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return { file: { handle, path: where }, chain };
  }

  /** `createWhole` without hard links: O_EXCL, then the text (false when something is there). */
  private async createWritten(relative: string, text: string): Promise<boolean> {
    let file: NewFile;
    try {
      file = await this.create(relative);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
    try {
      await file.handle.writeFile(text);
    } finally {
      await file.handle.close();
    }
    return true;
  }

  /**
   * The directories from the root down to `relative`, each a real directory (a link is refused), made one segment
   * at a time where missing and `create`, and looked at again after (a link planted meanwhile is refused too).
   */
  private async directories(relative: string, create: boolean): Promise<CheckedDirectory[]> {
    const chain = [this.top];
    let current = this.root;
    let shown = '';
    for (const segment of segments(relative)) {
      current = path.join(current, segment);
      shown = shown === '' ? segment : `${shown}/${segment}`;
      let stats = await lstat(current).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' && create) return null;
        throw error;
      });
      if (stats === null) {
        await mkdir(current).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
        stats = await lstat(current);
      }
      if (stats.isSymbolicLink()) throw refused(`${shown} is a symbolic link (never followed)`);
      if (!stats.isDirectory()) throw refused(`${shown} is not a folder`);
      chain.push({ path: current, dev: stats.dev, ino: stats.ino });
    }
    return chain;
  }

  /** Refuses when a directory of `chain` is not the one checked any more (swapped for a link or another folder). */
  private async recheck(chain: readonly CheckedDirectory[], relative: string): Promise<void> {
    for (const directory of chain) {
      const stats = await lstat(directory.path).catch(() => null);
      if (!stats?.isDirectory() || stats.dev !== directory.dev || stats.ino !== directory.ino) {
        throw refused(`${relative}: ${path.relative(this.root, directory.path) || 'the folder'} was replaced while band wrote there`);
      }
    }
  }
}

/** rename(2) that never replaces: a hard link (EEXIST when `to` is taken), then the old name removed. */
async function renameNoReplace(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    // No hard links here: look, then rename (the folder's own processes only could take the name meanwhile).
    if (await lstat(to).then(() => true, () => false)) throw Object.assign(new Error(`EEXIST: ${to} exists`), { code: 'EEXIST' });
    await rename(from, to);
    return;
  }
  await unlink(from);
}
