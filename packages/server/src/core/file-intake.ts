import { createHash, type Hash } from 'node:crypto';
import { extensionOf, FILE_TYPE_PLURALS, fileNameSchema } from '@bandcollab/sdk/contract';
import { DomainError, invalidField } from './errors.js';
import { describeBytes, type FileRule, hasExpectedSignature, SIGNATURE_LENGTH } from './file-types.js';

/**
 * The rules every uploaded byte passes, however it arrives (a multipart part, the PATCHes of a resumable
 * upload): the type's size limit, the leading bytes checked as soon as they have arrived, and the sha256 of
 * the whole file computed on the way. The one place these rules live.
 */
export class FileIntake {
  /** Bytes of the file taken so far, including those taken before this intake (`resumeAt`). */
  received: number;
  rule: FileRule | null;
  private head: Buffer;
  private hash: Hash | null;
  private readonly largest: FileRule;

  /**
   * Without a `named` rule the first of `rules` whose signature the leading bytes match types the file; until
   * they have arrived the largest limit of `rules` applies. `resumeAt` continues a file whose first
   * `received` bytes (and its `head`, up to SIGNATURE_LENGTH of them) were taken earlier; `hash` is then the
   * sha256 state over exactly those bytes, or null when it is not known here (see `sha256`).
   */
  constructor(
    private readonly rules: FileRule[],
    named: FileRule | null,
    resumeAt: { received: number; head: Buffer; hash: Hash | null } = { received: 0, head: Buffer.alloc(0), hash: createHash('sha256') },
  ) {
    this.hash = resumeAt.hash;
    this.rule = named;
    this.received = resumeAt.received;
    this.head = resumeAt.head;
    this.largest = rules.reduce((a, b) => (b.maxBytes > a.maxBytes ? b : a));
  }

  /** Counts, checks and hashes the next chunk; throws 413 or 415 as soon as the chunk breaks a rule. */
  take(chunk: Buffer): void {
    this.received += chunk.length;
    const limit = this.rule ?? this.largest;
    if (this.received > limit.maxBytes) throw fileTooLarge(limit);
    if (this.head.length < SIGNATURE_LENGTH) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, SIGNATURE_LENGTH - this.head.length)]);
      if (this.head.length === SIGNATURE_LENGTH) this.checkHead();
    }
    this.hash?.update(chunk);
  }

  /** Once the whole file has arrived: a file shorter than the longest signature is checked now. */
  finish(): void {
    this.checkHead();
  }

  /** The leading bytes taken so far (up to SIGNATURE_LENGTH), to continue the file in another intake. */
  get leadingBytes(): Buffer {
    return this.head;
  }

  /** The running sha256 state (null when unknown): a resumable upload keeps it between its PATCHes. */
  get runningHash(): Hash | null {
    return this.hash;
  }

  private checkHead(): void {
    // A SESSION file (§16) is whatever a DAW writes: no leading bytes to check.
    if (this.rule?.type === 'SESSION') return;
    this.rule ??= this.rules.find((candidate) => hasExpectedSignature(candidate.extension, this.head)) ?? null;
    if (this.rule === null || !hasExpectedSignature(this.rule.extension, this.head)) throw unsupportedType(this.rules);
  }
}

/**
 * The file name of a multipart part: the base name the browser sent (either separator, as RFC 7578 asks),
 * without control characters, at most 200 characters; then it must pass fileNameSchema, the rule every
 * uploaded file's name passes (a resumable upload's `filename` too): what cleaning cannot fix (a
 * bidirectional control, a name of only dots) is 400 on `field`.
 */
export function cleanFileName(raw: string, field: string): string {
  const base = raw.split(/[/\\]/).pop() ?? '';
  const clean = base.replace(/\p{Cc}/gu, '').trim();
  const extension = extensionOf(clean);
  const short = clean.length <= 200 ? clean : extension ? `${clean.slice(0, 199 - extension.length)}.${extension}` : clean.slice(0, 200);
  // No name at all is no name to check: the part is typed by its content, or refused for its missing extension.
  if (short === '') return short;
  const checked = fileNameSchema.safeParse(short);
  if (!checked.success) throw invalidField(field, checked.error.issues[0]!.message);
  return checked.data;
}

export function unsupportedType(rules: FileRule[]): DomainError {
  const accepted = rules.map((rule) => `.${rule.extension}`).join(', ');
  return new DomainError('UNSUPPORTED_FILE_TYPE', `Accepted files are ${accepted}, with contents that match the extension`);
}

export function fileTooLarge(rule: FileRule): DomainError {
  return new DomainError('FILE_TOO_LARGE', `${FILE_TYPE_PLURALS[rule.type]} (.${rule.extension}) are limited to ${describeBytes(rule.maxBytes)}`);
}
