import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import { FilesService } from '../files/service.js';
import { ArchivesRepository, type CutContent } from './repository.js';
import { uniqueNames, zipArchive, type ZipArchive } from './zip.js';

/** A cut's files as one ZIP, and the name a browser saves it under. */
export interface CutArchive {
  downloadName: string;
  zip: ZipArchive;
}

/** Cut archives: for members, and for holders of a cut's share link. */
@injectable()
export class ArchivesService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(ArchivesRepository) private readonly repository: ArchivesRepository,
    @inject(FilesService) private readonly files: FilesService,
  ) {}

  /**
   * The latest version of each series; `versions: 'all'` every version, each named `<name> (v<N>).<ext>` so
   * the versions of one mix sit side by side.
   */
  async forMember(principal: Principal, cutId: string, versions: 'latest' | 'all'): Promise<CutArchive> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      const content = await this.repository.cutContent(tx, cutId, { latest: versions === 'latest' });
      if (!content) throw notFound('Cut');
      return this.archive(content, { versionNames: versions === 'all' });
    });
  }

  /** Entries named as downloads are (`<display name>.<ext>`, with `versionNames` ` (v<N>)` before the extension), repeats numbered, in upload order. */
  archive(content: CutContent, { versionNames = false } = {}): CutArchive {
    const stored = content.files.map((row) => this.files.bytesOf(row));
    const names = uniqueNames(stored.map((bytes, i) => (versionNames ? versionName(bytes.downloadName, content.files[i]!.version) : bytes.downloadName)));
    const entries = stored.map((bytes, i) => ({
      name: names[i]!,
      size: bytes.size,
      modifiedAt: bytes.modifiedAt,
      open: () => bytes.openReader(),
    }));
    return { downloadName: `${content.name}.zip`, zip: zipArchive(entries) };
  }
}

/** `mix.wav`, 3 → `mix (v3).wav` (the download name always ends with the file's extension). */
function versionName(downloadName: string, version: number): string {
  const dot = downloadName.lastIndexOf('.');
  return `${downloadName.slice(0, dot)} (v${version})${downloadName.slice(dot)}`;
}
