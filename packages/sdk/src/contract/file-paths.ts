// The `path` of a file inside its cut's folder (§16): how it is checked, normalised and compared. Shared by the
// server (which enforces it) and the SDK and CLI (which check a folder before sending it, and find the names two
// systems would merge). Plain functions, no zod, so the SDK's main entry can use them.

/** A path's length in code points, after NFC. */
export const MAX_PATH_CODE_POINTS = 1024;
/** A segment's length in UTF-8 bytes: what file systems allow for one name. */
export const MAX_SEGMENT_BYTES = 255;

/** A checked path (NFC), or why the path is refused (a sentence that follows the field's name). */
export type CheckedPath = { path: string } | { problem: string };

/**
 * Checks a file's relative POSIX path and normalises it to NFC: 1–1024 code points, segments separated by `/`,
 * each at most 255 UTF-8 bytes, none empty, `.` or `..`, no leading `/`, no `\`, no control characters.
 */
export function checkFilePath(raw: string): CheckedPath {
  const path = raw.normalize('NFC');
  const length = [...path].length;
  if (length === 0) return { problem: 'must not be empty' };
  if (length > MAX_PATH_CODE_POINTS) return { problem: `must be at most ${MAX_PATH_CODE_POINTS} characters` };
  if (/\p{Cc}/u.test(path)) return { problem: 'must not contain control characters' };
  if (path.includes('\\')) return { problem: 'must separate its segments with / (not \\)' };
  if (path.startsWith('/')) return { problem: 'must be relative (no leading /)' };
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return { problem: 'must not have an empty, . or .. segment' };
    if (new TextEncoder().encode(segment).length > MAX_SEGMENT_BYTES) return { problem: `must not have a segment over ${MAX_SEGMENT_BYTES} UTF-8 bytes` };
  }
  return { path };
}

/**
 * What two paths are compared by: NFC with Unicode case folding, so `Take 1.wav`, `TAKE 1.WAV` and a decomposed
 * `Take 1.wav` are one path. Upper then lower case is full case folding (ß → ss, ς → σ, ﬁ → fi) but for the
 * Turkic dotless ı, which folding keeps and this makes i; NFC again, as folding may decompose.
 */
export function filePathKey(path: string): string {
  return path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}
