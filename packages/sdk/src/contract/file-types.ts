// The accepted upload types (§6), shared by the SDK's client-side checks and the server's. Plain data and
// functions, no zod, so the SDK's main entry can use them without loading the schema library.

/** CUT, STEM and IMAGE by their extensions (§6); SESSION: any other extension uploaded with a `path` (§16). */
export type FileType = 'CUT' | 'STEM' | 'IMAGE' | 'SESSION';

/** The accepted upload types (§6): extension → type, MIME type and size limit. */
export interface FileTypeRule {
  type: FileType;
  mimeType: string;
  maxBytes: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * The contract's size limit per type; a server may set lower ones. The largest (4 GiB) is also the resumable
 * uploads' Tus-Max-Size and what a multipart upload's Content-Length is first checked against.
 */
export const MAX_UPLOAD_BYTES: Readonly<Record<FileType, number>> = { CUT: 2 * GiB, STEM: 4 * GiB, IMAGE: 5 * MiB, SESSION: 500 * MiB };

export const FILE_TYPES: Readonly<Record<string, FileTypeRule>> = {
  mp3: { type: 'CUT', mimeType: 'audio/mpeg', maxBytes: MAX_UPLOAD_BYTES.CUT },
  wav: { type: 'CUT', mimeType: 'audio/wav', maxBytes: MAX_UPLOAD_BYTES.CUT },
  aif: { type: 'CUT', mimeType: 'audio/aiff', maxBytes: MAX_UPLOAD_BYTES.CUT },
  aiff: { type: 'CUT', mimeType: 'audio/aiff', maxBytes: MAX_UPLOAD_BYTES.CUT },
  ogg: { type: 'CUT', mimeType: 'audio/ogg', maxBytes: MAX_UPLOAD_BYTES.CUT },
  flac: { type: 'CUT', mimeType: 'audio/flac', maxBytes: MAX_UPLOAD_BYTES.CUT },
  aac: { type: 'CUT', mimeType: 'audio/aac', maxBytes: MAX_UPLOAD_BYTES.CUT },
  m4a: { type: 'CUT', mimeType: 'audio/mp4', maxBytes: MAX_UPLOAD_BYTES.CUT },
  zip: { type: 'STEM', mimeType: 'application/zip', maxBytes: MAX_UPLOAD_BYTES.STEM },
  jpg: { type: 'IMAGE', mimeType: 'image/jpeg', maxBytes: MAX_UPLOAD_BYTES.IMAGE },
  jpeg: { type: 'IMAGE', mimeType: 'image/jpeg', maxBytes: MAX_UPLOAD_BYTES.IMAGE },
  png: { type: 'IMAGE', mimeType: 'image/png', maxBytes: MAX_UPLOAD_BYTES.IMAGE },
  gif: { type: 'IMAGE', mimeType: 'image/gif', maxBytes: MAX_UPLOAD_BYTES.IMAGE },
  webp: { type: 'IMAGE', mimeType: 'image/webp', maxBytes: MAX_UPLOAD_BYTES.IMAGE },
};

/**
 * A session folder's other files (§16): any extension FILE_TYPES does not name, uploaded with a `path`. Its
 * bytes are not checked (DAW project files have no common signature) and it is always served as an attachment.
 */
export const SESSION_FILE_TYPE: Readonly<FileTypeRule> = { type: 'SESSION', mimeType: 'application/octet-stream', maxBytes: MAX_UPLOAD_BYTES.SESSION };

/** The extensions of a type, in the table's order: `extensionsOf('IMAGE')` is jpg, jpeg, png, gif, webp. */
export function extensionsOf(type: FileType): string[] {
  return Object.keys(FILE_TYPES).filter((extension) => FILE_TYPES[extension]!.type === type);
}

/** What people call each type, for display (the API's codes CUT, STEM and IMAGE are not for them). */
export const FILE_TYPE_LABELS: Readonly<Record<FileType, string>> = { CUT: 'audio', STEM: 'stems (ZIP)', IMAGE: 'image', SESSION: 'session file' };

/** How a sentence names the files of a type: "Audio files (.wav) are limited to 100 MiB". */
export const FILE_TYPE_PLURALS: Readonly<Record<FileType, string>> = { CUT: 'Audio files', STEM: 'Stems', IMAGE: 'Images', SESSION: 'Session files' };

/**
 * A size as limits are set: whole GiB or MiB as such, else one decimal: 2147483648 → "2 GiB", 2147483649 →
 * "2.0 GiB", 104857600 → "100 MiB", 104858624 → "100.0 MiB", 1572864 → "1.5 MiB".
 */
export function describeSize(bytes: number): string {
  if (bytes >= GiB) return bytes % GiB === 0 ? `${bytes / GiB} GiB` : `${(bytes / GiB).toFixed(1)} GiB`;
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${(bytes / MiB).toFixed(1)} MiB`;
}

/**
 * The extension of a file name, lower case and without the dot ('' when there is none). A name that
 * starts with its only dot (`.mp3`) has nothing before the dot, so it has no extension.
 */
export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot <= 0 ? '' : fileName.slice(dot + 1).toLowerCase();
}

/**
 * The upload rule for a file name's extension (case-insensitive). Any other extension is a SESSION file when
 * the upload has a `path` (`withPath`), else undefined: no type accepts it.
 */
export function fileTypeFor(fileName: string, { withPath = false }: { withPath?: boolean } = {}): FileTypeRule | undefined {
  const extension = extensionOf(fileName);
  if (Object.hasOwn(FILE_TYPES, extension)) return FILE_TYPES[extension];
  return withPath ? SESSION_FILE_TYPE : undefined;
}
