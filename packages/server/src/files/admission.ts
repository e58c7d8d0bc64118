import { checkFilePath, filePathKey, type FileType, isUuid, reservedPathProblem, SESSION_FILE_TYPE } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import type { FileRule, FileTypes } from '../core/file-types.js';
import { ProjectAccess } from '../core/project-access.js';
import type { Reservation } from '../core/space.js';
import { type PartAdmission, UploadLimits } from '../core/upload-limits.js';
import { FilesRepository, type SeriesOfFile } from './repository.js';

/** The types a file upload takes (a SESSION file besides, with a path: §16). */
const UPLOAD_TYPES: readonly FileType[] = ['CUT', 'STEM', 'IMAGE'];

/** The largest file an upload may be (tus announces it as Tus-Max-Size). */
export function largestUpload(fileTypes: FileTypes): number {
  return Math.max(...fileTypes.rulesOf(UPLOAD_TYPES).map((rule) => rule.maxBytes));
}

/** A version stays in its series' cut and type ("same type" is File.type): else 400 naming versionOf. */
export function checkVersion(series: SeriesOfFile, { cutId, type }: { cutId?: string | null; type?: FileType }): void {
  if (cutId && cutId !== series.cutId) throw invalidField('versionOf', 'must be a file of the cut cutId names (a version stays in its series\' cut)');
  if (type && type !== series.type) throw invalidField('versionOf', `names a ${series.type} file: a new version must be of the same type`);
}

/**
 * A version without a path keeps its series' path (§16): refused, naming path, when that path is one the
 * reserved-path policy refuses (stored before the policy), so the next version moves the series out of it.
 */
export function checkKeptPath(series: SeriesOfFile, path: string | null): void {
  const problem = path === null && series.path !== null ? reservedPathProblem(series.path) : undefined;
  if (problem) throw invalidField('path', `is required: this series is at "${series.path}", and a path ${problem}; give the new version another path`);
}

/** 409 PATH_TAKEN, naming the latest version of the series at the path when it is known. */
export function pathTaken(path: string, holder: { latestId: string } | null): DomainError {
  return new DomainError(
    'PATH_TAKEN',
    `"${path}" is the path of another file in this cut (compared without case): upload it as a version of that file (versionOf)`,
    holder ? { fileId: holder.latestId } : {},
  );
}

/** Whether an If-None-Match header (`"<sha256 hex>"`, a list of them, or `*`) matches a file's sha256. */
export function matchesEntityTag(header: string, sha256: string): boolean {
  return header.split(',').some((tag) => {
    const value = tag.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1').toLowerCase();
    return value === '*' || value === sha256;
  });
}

/** What an admitted upload becomes: where its file goes, and the rule its bytes are taken under. */
export interface Admitted {
  cutId: string;
  /** The series it becomes the next version of. */
  series: SeriesOfFile | null;
  /** Its path (NFC, §16); null: none, or with a series the series' own. */
  path: string | null;
  rule: FileRule;
}

/** A whole upload as a resumable upload's creation announces it (tus `Upload-Length` and `Upload-Metadata`). */
export interface AnnouncedUpload {
  cutId: string | null;
  versionOf: string | null;
  /** If-None-Match: with versionOf, the latest version's sha256 makes it 412 UNCHANGED. */
  ifNoneMatch: string | null;
  fileName: string;
  path: string | null;
  length: number;
}

/**
 * Upload admission (API §6, §10, §14, §16, §21): the one place that decides whether a file upload may start,
 * for both protocols — a multipart upload (`form`, field by field as they arrive) and a resumable upload's
 * creation (`announced`, all at once). Access (a member of the cut's project, a visible file for versionOf),
 * the type by extension (the leading bytes follow with the bytes, FileIntake), the type's limit, the quota and
 * the disk floor (UploadLimits), versionOf and If-None-Match, the session path. A cut or file in the trash is
 * invisible to the `live` views every query reads, so it takes no upload (404) here as everywhere. The limits
 * are counted before the expensive work (a body read, an object written, a row); `checkQuotaInTransaction` is
 * their final word where the row is written. `Idempotency-Key` is core/routes.ts's, before either protocol's
 * handler runs.
 */
@injectable()
export class UploadAdmission {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(FilesRepository) private readonly repository: FilesRepository,
    @inject(UploadLimits) private readonly limits: UploadLimits,
  ) {}

  /**
   * A multipart upload's admission, decided as its parts arrive. A `versionOf` from the query (and an
   * If-None-Match on it) is checked now, before the body is read.
   */
  async form(principal: Principal, { versionOf, ifNoneMatch }: { versionOf: string | undefined; ifNoneMatch: string | null }): Promise<FormAdmission> {
    const form = new FormAdmission(this, principal, ifNoneMatch);
    if (versionOf) await form.field('versionOf', versionOf);
    return form;
  }

  /**
   * A resumable upload's creation: every check before any byte, in this order — versionOf (404, 400, 412), access
   * to the cut (404), the type by the file name (415), the version's type and path, a taken path (409), the type's
   * limit (413), then quota and disk (507) for its whole length.
   */
  async announced(principal: Principal, request: AnnouncedUpload): Promise<Admitted> {
    const series = request.versionOf ? await this.versionTarget(principal, request.versionOf, { cutId: request.cutId, ifNoneMatch: request.ifNoneMatch }) : null;
    const cutId = series?.cutId ?? request.cutId!;
    await this.access.require(principal, 'cut', cutId);
    const rule = this.ruleFor(request.fileName, series, request.path);
    await this.checkPath(cutId, series, request.path);
    this.limits.checkLength(rule, request.length);
    await this.limits.checkRoom(principal.userId, request.length);
    return { cutId, series, path: request.path, rule };
  }

  /** The quota's final word, in the transaction that records `bytes` more for the uploader (0 once its row is written). */
  checkQuotaInTransaction(tx: Queryable, principal: Principal, bytes: number): Promise<void> {
    return this.limits.checkQuotaInTransaction(tx, principal.userId, bytes);
  }

  /** The rule an admitted upload's stored extension stands for: one of the table's, else it was admitted as a SESSION file. */
  ruleOfExtension(extension: string): FileRule {
    return this.rules().find((candidate) => candidate.extension === extension) ?? { ...SESSION_FILE_TYPE, extension };
  }

  rules(): FileRule[] {
    return this.limits.rulesOf(UPLOAD_TYPES);
  }

  /** Room for a multipart body of `declared` bytes: 413 over the largest limit, 507 over the quota or the floor. */
  reserveBody(principal: Principal, declared: number): Promise<Reservation> {
    return this.limits.reserveBody(principal.userId, declared, this.rules());
  }

  /**
   * The rule the file name selects (415); with a path (given, or the series'), any other extension is a SESSION
   * file (§16). A version must be of its series' type (400 naming versionOf).
   */
  ruleFor(fileName: string, series: SeriesOfFile | null, path: string | null): FileRule {
    const rule = this.limits.ruleForName(this.rules(), fileName, path !== null || (series?.path ?? null) !== null);
    if (series) checkVersion(series, { type: rule.type });
    return rule;
  }

  /**
   * The series an upload with `versionOf` joins: the file must be visible (404) and, when the upload names a cut,
   * in that cut; with `ifNoneMatch` equal to the latest version's sha256 the upload is refused as UNCHANGED,
   * naming that version.
   */
  async versionTarget(principal: Principal, versionOf: string, check: { cutId?: string | null; ifNoneMatch: string | null }): Promise<SeriesOfFile> {
    await this.access.require(principal, 'file', versionOf);
    const series = await this.repository.seriesOf(this.sql, { fileId: versionOf });
    if (!series) throw notFound('File');
    checkVersion(series, check);
    if (check.ifNoneMatch && matchesEntityTag(check.ifNoneMatch, series.latestSha256)) {
      throw new DomainError('UNCHANGED', 'The latest version of this series has the same sha256: nothing was uploaded', { fileId: series.latestId });
    }
    return series;
  }

  async requireCut(principal: Principal, cutId: string): Promise<void> {
    await this.access.require(principal, 'cut', cutId);
  }

  /**
   * A version's kept path (400 naming path), and, where the cut is known, 409 PATH_TAKEN when another series of
   * the cut holds the path (compared by `filePathKey`). Only a courtesy: recording the file is what the database refuses.
   */
  async checkPath(cutId: string | null, series: SeriesOfFile | null, path: string | null): Promise<void> {
    if (series) checkKeptPath(series, path);
    if (path === null || cutId === null) return;
    const holder = await this.repository.seriesAtPath(this.sql, cutId, filePathKey(path));
    if (holder && holder.seriesId !== (series?.seriesId ?? null)) throw pathTaken(path, holder);
  }
}

/**
 * One multipart upload's admission (core/multipart.ts asks it): every check before the bytes it can be made
 * before. A cutId or versionOf sent before the file part is checked before any byte is stored; a taken path
 * once every field before the file is known (versionOf may follow path); the type by the file part's name.
 */
export class FormAdmission implements PartAdmission {
  private cutId: string | null = null;
  private series: SeriesOfFile | null = null;
  private path: string | null = null;

  constructor(
    private readonly admission: UploadAdmission,
    private readonly principal: Principal,
    /** If-None-Match: answered as soon as versionOf is known (the query, or its field). */
    private readonly ifNoneMatch: string | null,
  ) {}

  get rules(): FileRule[] {
    return this.admission.rules();
  }

  reserve(declared: number): Promise<Reservation> {
    return this.admission.reserveBody(this.principal, declared);
  }

  /** Fields that are not ids here are left to the upload's schema (uploadFields), checked once the form is read. */
  async field(name: string, value: string): Promise<void> {
    if (name === 'cutId' && isUuid(value)) {
      this.cutId = value.toLowerCase();
      await this.admission.requireCut(this.principal, this.cutId);
    }
    if (name === 'versionOf' && isUuid(value)) {
      this.series = await this.admission.versionTarget(this.principal, value.toLowerCase(), { ifNoneMatch: this.ifNoneMatch });
    }
    if (name === 'path') {
      const checked = checkFilePath(value);
      if ('problem' in checked) throw invalidField('path', checked.problem);
      this.path = checked.path;
    }
  }

  beforeFile(): Promise<void> {
    return this.admission.checkPath(this.series?.cutId ?? this.cutId, this.series, this.path);
  }

  ruleFor(fileName: string): FileRule {
    return this.admission.ruleFor(fileName, this.series, this.path);
  }
}
