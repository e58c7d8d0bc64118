// What a bulk upload or download did: made by bulk-upload.ts and bulk-download.ts, rendered by views/files.ts.
import type { FileRecord } from '@bandcollab/sdk';
import type { CliError } from './exit-codes.js';
import type { LocalFile } from './globs.js';

export interface UploadReport {
  /** The records of the uploaded files and of those already on the cut, in the order of `files`. */
  records: FileRecord[];
  failures: { file: LocalFile; error: CliError }[];
  skipped: number;
  uploadedBytes: number;
  seconds: number;
}

export interface DownloadReport {
  /** The folder the files went to. */
  dir: string;
  /** The records of the files that are now in the folder (downloaded or skipped), in the cut's order. */
  records: FileRecord[];
  failures: { file: FileRecord; error: CliError }[];
  skipped: number;
  downloadedBytes: number;
  seconds: number;
}
