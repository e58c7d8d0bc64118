import { extensionOf, FILE_TYPES, type FileType, type FileTypeRule, SESSION_FILE_TYPE } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Config } from './config.js';
import { CONFIG } from './di.js';

/** A FILE_TYPES rule (or the SESSION rule) with the extension it belongs to and the limit this server enforces. */
export interface FileRule extends FileTypeRule {
  /** Lower case, without the dot: a key of FILE_TYPES, or a SESSION file's own extension (`sessionRule`). */
  extension: string;
}

/** How many leading bytes `hasExpectedSignature` needs at most. */
export const SIGNATURE_LENGTH = 12;

/**
 * The accepted upload types of the API. The type and MIME type come from the extension (never from
 * the client); the limits are the contract's unless MAX_AUDIO_BYTES / MAX_STEM_BYTES / MAX_IMAGE_BYTES
 * lower them.
 */
@injectable()
export class FileTypes {
  private readonly limits: Record<FileType, number | null>;

  constructor(@inject(CONFIG) config: Config) {
    this.limits = { CUT: config.maxAudioBytes, STEM: config.maxStemBytes, IMAGE: config.maxImageBytes, SESSION: null };
  }

  /**
   * The SESSION rule (§16) for a file name no rule of FILE_TYPES claims, uploaded with a path. Its bytes are
   * stored as `<id>.<extension>`, so only a plain extension is kept; any other (none, spaces, non-ASCII) is `bin`.
   */
  sessionRule(fileName: string): FileRule {
    const extension = extensionOf(fileName);
    return { ...SESSION_FILE_TYPE, extension: /^[a-z0-9]{1,16}$/.test(extension) ? extension : 'bin' };
  }

  /** The rules of the given types, e.g. `['IMAGE']` for project covers. */
  rulesOf(types: readonly FileType[]): FileRule[] {
    return Object.entries(FILE_TYPES)
      .filter(([, rule]) => types.includes(rule.type))
      .map(([extension, rule]) => ({ ...rule, extension, maxBytes: this.limits[rule.type] ?? rule.maxBytes }));
  }
}

const ascii = (head: Buffer, offset: number, text: string): boolean =>
  head.length >= offset + text.length && head.toString('latin1', offset, offset + text.length) === text;

/** The frame sync of an MPEG audio frame header: its first 11 bits set (the contract asks no more of it). */
const mpegFrameSync = (head: Buffer): boolean => head.length >= 2 && head[0] === 0xff && (head[1]! & 0xe0) === 0xe0;

/** The syncword of an AAC ADTS frame header: its first 12 bits set. */
const adtsFrameSync = (head: Buffer): boolean => head.length >= 2 && head[0] === 0xff && (head[1]! & 0xf0) === 0xf0;

const SIGNATURES: Record<string, (head: Buffer) => boolean> = {
  mp3: (head) => ascii(head, 0, 'ID3') || mpegFrameSync(head),
  // RF64 and BW64: what DAWs write past 4 GiB (the same chunks, their 64-bit sizes in a "ds64" chunk).
  wav: (head) => (ascii(head, 0, 'RIFF') || ascii(head, 0, 'RF64') || ascii(head, 0, 'BW64')) && ascii(head, 8, 'WAVE'),
  aif: (head) => ascii(head, 0, 'FORM') && (ascii(head, 8, 'AIFF') || ascii(head, 8, 'AIFC')),
  ogg: (head) => ascii(head, 0, 'OggS'),
  flac: (head) => ascii(head, 0, 'fLaC'),
  aac: (head) => adtsFrameSync(head) || ascii(head, 0, 'ADIF'),
  m4a: (head) => ascii(head, 4, 'ftyp'),
  zip: (head) => ascii(head, 0, 'PK\x03\x04') || ascii(head, 0, 'PK\x05\x06'),
  jpg: (head) => head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff,
  png: (head) => ascii(head, 0, '\x89PNG\r\n\x1a\n'),
  gif: (head) => ascii(head, 0, 'GIF87a') || ascii(head, 0, 'GIF89a'),
  webp: (head) => ascii(head, 0, 'RIFF') && ascii(head, 8, 'WEBP'),
};
SIGNATURES.jpeg = SIGNATURES.jpg!;
SIGNATURES.aiff = SIGNATURES.aif!;

/** Whether a file's first bytes (up to SIGNATURE_LENGTH of them) match what its extension promises. */
export function hasExpectedSignature(extension: string, head: Buffer): boolean {
  return SIGNATURES[extension]?.(head) ?? false;
}

/** A size for people: whole MiB as such (limits and quotas are set in MiB), anything else in bytes. */
export function describeBytes(bytes: number): string {
  const MiB = 1024 * 1024;
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}
