import { extensionOf, type FileType } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable } from './database.js';
import { DomainError } from './errors.js';
import { fileTooLarge, unsupportedType } from './file-intake.js';
import { describeBytes, type FileRule, FileTypes } from './file-types.js';
import { insufficientStorage, type Reservation, Space } from './space.js';

/** Room for the text fields and part headers around a multipart file, for the early Content-Length check. */
const MULTIPART_OVERHEAD = 1024 * 1024;

/**
 * What a multipart form asks before and while its file part is stored (core/multipart.ts): files/admission.ts
 * answers for file uploads, `UploadLimits.images` for project covers, vibe images and avatars.
 */
export interface PartAdmission {
  /** The accepted rules: a file is typed by its leading bytes among them, and the largest applies until its type is known. */
  readonly rules: FileRule[];
  /** Before the body is read: refuses it by its Content-Length (413, 507) and reserves room for it. */
  reserve(declared: number): Promise<Reservation>;
  /** A text field as it arrives; a throw ends the upload with that error. */
  field(name: string, value: string): Promise<void>;
  /** Once the fields before the file part have been checked, before any byte is stored. */
  beforeFile(): Promise<void>;
  /** The rule the file part's name selects (415 when none), or null: typed by its leading bytes. */
  ruleFor(fileName: string): FileRule | null;
}

/**
 * The limits every upload is counted against before its bytes, whichever protocol brings them and whatever it
 * becomes (a file, an image): the type its name selects, the type's size limit, the quota and the free-disk
 * floor (Space). Counted before the expensive work (reading a body, writing an object, a row); the bytes
 * themselves pass FileIntake and the reservation as they arrive. files/admission.ts adds a file's own rules.
 */
@injectable()
export class UploadLimits {
  constructor(
    @inject(FileTypes) private readonly fileTypes: FileTypes,
    @inject(Space) private readonly space: Space,
  ) {}

  rulesOf(types: readonly FileType[]): FileRule[] {
    return this.fileTypes.rulesOf(types);
  }

  /**
   * The rule a client's file name selects by its extension among `rules`; with `session`, any other extension is a
   * SESSION file (§16). 415 naming the accepted extensions when there is neither.
   */
  ruleForName(rules: FileRule[], fileName: string, session: boolean): FileRule {
    const extension = extensionOf(fileName);
    const rule = rules.find((candidate) => candidate.extension === extension) ?? (session ? this.fileTypes.sessionRule(fileName) : null);
    if (!rule) throw unsupportedType(rules);
    return rule;
  }

  /** A file of known length (tus Upload-Length): 413 over its type's limit. */
  checkLength(rule: FileRule, length: number): void {
    if (length > rule.maxBytes) throw fileTooLarge(rule);
  }

  /**
   * A multipart body of `declared` bytes (its Content-Length, 0 when unknown) for one of `rules`: 413 when it is
   * over the largest limit plus the form's overhead, else the room it reserves (507 over the quota or the floor),
   * held by the caller until the bytes are recorded or removed.
   */
  async reserveBody(owner: string, declared: number, rules: FileRule[]): Promise<Reservation> {
    const largest = Math.max(...rules.map((rule) => rule.maxBytes));
    if (declared > largest + MULTIPART_OVERHEAD) throw new DomainError('FILE_TOO_LARGE', `Uploads here are limited to ${describeBytes(largest)}`);
    return this.space.reserve(owner, declared);
  }

  /**
   * A whole file of `length` bytes to come later (a resumable upload): 507 when it would cross the quota or the
   * floor now. Nothing is held: the quota counts the upload's row from its creation (`checkQuotaInTransaction`).
   */
  async checkRoom(owner: string, length: number): Promise<void> {
    (await this.space.reserve(owner, length)).release();
  }

  /** The quota's final word in the transaction that records `bytes` more for `owner` (0 once written). */
  checkQuotaInTransaction(tx: Queryable, owner: string, bytes: number): Promise<void> {
    return this.space.checkQuotaInTransaction(tx, owner, bytes);
  }

  /** Room on disk for bytes the quota counts already (a resumable upload's PATCH): the floor only. */
  reserveDisk(bytes: number): Promise<Reservation> {
    return this.space.reserveDisk(bytes);
  }

  /** The error for a write the disk refused (ENOSPC); the next check measures the free space again. */
  diskFull(): DomainError {
    this.space.measureAgain();
    return insufficientStorage();
  }

  /**
   * An image form's part (covers, vibe images, avatars): an image by its extension, or by its leading bytes when
   * its name has none (a Blob arrives as "blob"); no fields of its own to check.
   */
  images(owner: string): PartAdmission {
    const rules = this.rulesOf(['IMAGE']);
    return {
      rules,
      reserve: (declared) => this.reserveBody(owner, declared, rules),
      field: async () => undefined,
      beforeFile: async () => undefined,
      ruleFor: (fileName) => (extensionOf(fileName) === '' ? null : this.ruleForName(rules, fileName, false)),
    };
  }
}
