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
 * each at most 255 UTF-8 bytes, none empty, `.` or `..`, no leading `/`, no `\`, no control characters, and
 * nothing `reservedPathProblem` refuses.
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
  const reserved = reservedPathProblem(path);
  return reserved === undefined ? { path } : { problem: reserved };
}

/**
 * The folders version control and band keep their state in. A `.git/config` from a bandmate would run their
 * command at the pulling musician's next `git status`, and a push would send the pusher's own (credentials and
 * all), so no session path may pass through one, in any case, nor through its Windows short name (`GIT~1`).
 */
const RESERVED_SEGMENTS: readonly string[] = ['.git', '.hg', '.svn', '.band'];

/** A folder's ignore rules (§16): each musician's own, so a path may not be the top-level one. */
export const IGNORE_FILE = '.bandignore';

/** The names Windows gives its devices, whatever the extension (`NUL.wav` is the device too). */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$/i;

/** Code points HFS+ ignores in names (so `.g\u200Cit` is `.git` there), as git leaves them out when it compares. */
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/gu;

/**
 * The reserved-path policy (§16), one for every side: the server refuses such a path on every upload, push never
 * sends one and pull never writes one, whatever a server lists. Answers why `path` (NFC) is reserved, as a
 * sentence following the field's name, or undefined. Refused: a segment that is, ignoring case, a folder of
 * `RESERVED_SEGMENTS` or its short name; the top-level `.bandignore`; a Windows device name; a segment ending in
 * `.` or a space; a `:` (a data stream on Windows, a `/` to macOS Finder).
 */
export function reservedPathProblem(path: string): string | undefined {
  if (path.includes(':')) return 'must not contain ":"';
  const segments = path.split('/').map((segment) => filePathKey(segment.replace(HFS_IGNORED, '')));
  for (const segment of segments) {
    if (/[. ]$/.test(segment)) return 'must not have a segment ending in "." or a space (Windows drops them)';
    if (WINDOWS_DEVICE.test(segment)) return 'must not have a segment named after a Windows device (CON, NUL, COM1…)';
    if (RESERVED_SEGMENTS.some((reserved) => segment === reserved || segment === `${reserved.slice(1)}~1`)) {
      return 'must not have a .git, .hg, .svn or .band segment (version control and band keep their state there)';
    }
  }
  if (segments.length === 1 && segments[0] === IGNORE_FILE) return `must not be the top-level ${IGNORE_FILE} (each folder keeps its own ignore rules)`;
  return undefined;
}

/**
 * What two paths are compared by: NFC with Unicode case folding, so `Take 1.wav`, `TAKE 1.WAV` and a decomposed
 * `Take 1.wav` are one path. Upper then lower case is full case folding (ß → ss, ς → σ, ﬁ → fi) but for the
 * Turkic dotless ı, which folding keeps and this makes i; NFC again, as folding may decompose.
 */
export function filePathKey(path: string): string {
  return path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}
