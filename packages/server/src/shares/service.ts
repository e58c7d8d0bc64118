import type { RevokeSharesResult, SharedCut, SharedFile, ShareLink, ShareRecord, FeedbackLinkState } from '@bandcollab/sdk/contract';
import { randomUUID } from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import { ArchivesService, type CutArchive } from '../archives/service.js';
import { seal, unseal } from '../core/sealed.js';
import { hashToken, randomToken } from '../core/tokens.js';
import type { Principal } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import type { Queryable, Sql } from '../core/database.js';
import { CONFIG, SIGNING_SECRET, SQL } from '../core/di.js';
import { DomainError, forbidden, invalidField, notFound } from '../core/errors.js';
import { type Access, ProjectAccess } from '../core/project-access.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import { FilesRepository, findStoredFileRows, type StoredFileRow } from '../files/repository.js';
import { ArchivesRepository } from '../archives/repository.js';
import type { FeedbackLink } from '../comments/service.js';
import { type ShareOptions, type ShareTarget, SharesRepository } from './repository.js';

/** Live links one file or cut may have: each is a public door to audit and revoke. */
export const MAX_LIVE_LINKS = 100;

/** What a reusable link's sealed token is for (`core/sealed.ts`): its key is no other record's. */
const SHARE_TOKEN_PURPOSE = 'bandcollab share link token';

/** A `randomToken`: 32 random bytes, base64url, 43 characters. Only its hash is stored. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** What a working token opens: a file (the version it serves now), or a cut with its files as they are now. */
export type ResolvedShare =
  | ({ kind: 'file'; linkId: string; createdBy: string; expiresAt: Date | null; commentsClosed: boolean; file: StoredFileRow; version: number; seriesFileIds: string[] } & ShareOptions)
  | { kind: 'cut'; linkId: string; expiresAt: Date | null; cutId: string; name: string; files: StoredFileRow[]; download: boolean };

/** 403 DOWNLOAD_DISABLED: a stream-only link's original or archive (§20). */
export const downloadDisabled = (): DomainError =>
  new DomainError('DOWNLOAD_DISABLED', 'This link streams the preview only: its original and its archive do not download');

/** Which request to a link's bytes or page is an access, as the counting rule reads it. */
export interface AccessRequest {
  method: string;
  /** The Range header, if any. */
  range?: string;
  /** The Sec-Fetch-Dest header, if any: what the browser loads the response into. */
  fetchDest?: string;
}

/** A player's or picture's load from the page: the page view already counted. */
const EMBEDDED_DESTINATIONS = new Set(['audio', 'video', 'track', 'image']);

/**
 * Counting rule: a page view or a download counts once. HEAD never counts; a Range that does not start at
 * byte 0 continues (or seeks within) a download that already counted; the page's own player and picture
 * load as part of the page view (browsers name them in Sec-Fetch-Dest).
 */
export function countsAsAccess({ method, range, fetchDest }: AccessRequest): boolean {
  if (method !== 'GET') return false;
  if (fetchDest && EMBEDDED_DESTINATIONS.has(fetchDest.toLowerCase())) return false;
  return range === undefined || /^\s*bytes\s*=\s*0+\s*-/i.test(range);
}

/** What a guest's comments need of a file link that allows them. */
export const feedbackLinkOf = (share: ResolvedShare & { kind: 'file' }): FeedbackLink => ({
  id: share.linkId,
  createdBy: share.createdBy,
  fileId: share.file.id,
  shownFileIds: share.follow === 'latest' ? share.seriesFileIds : [share.file.id],
});

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

@injectable()
export class SharesService {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(SIGNING_SECRET) private readonly secret: string,
    @inject(SQL) private readonly sql: Sql,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(SharesRepository) private readonly repository: SharesRepository,
    @inject(FilesRepository) private readonly files: FilesRepository,
    @inject(ArchivesRepository) private readonly cutContents: ArchivesRepository,
    @inject(ArchivesService) private readonly archives: ArchivesService,
  ) {}

  /**
   * A new link on every call; `expiresIn` seconds, or a link that lasts until revoked. Only a file link follows
   * its series or takes comments: a cut link shows the cut's files as they are. With `reuse`, the caller's live
   * link that an earlier request with `reuse` made with the same options is handed out again (a CI job that
   * publishes on every run shares one link), its expiry moved to the later of the two.
   */
  async create(principal: Principal, target: ShareTarget, expiresIn: number | null, options: ShareOptions & { reuse: boolean }): Promise<ShareLink> {
    if ('cutId' in target && options.follow !== 'this') throw invalidField('follow', 'a cut link shows the cut as it is: only a file link follows a series');
    if ('cutId' in target && options.allowComments) throw invalidField('allowComments', 'comments are left on a file: make a file link');
    const { reuse, ...shareOptions } = options;
    const requestedExpiry = expiresIn === null ? null : new Date(Date.now() + expiresIn * 1000);
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.requireMember(principal, target, tx);
      if (reuse) {
        const kept = await this.repository.findReusableLocked(tx, target, principal.userId, shareOptions);
        const token = kept && unseal(this.secret, SHARE_TOKEN_PURPOSE, kept.id, kept.tokenSealed);
        if (kept && token !== null) {
          const expiresAt = kept.expiresAt === null || requestedExpiry === null ? null : new Date(Math.max(kept.expiresAt.getTime(), requestedExpiry.getTime()));
          if (expiresAt?.getTime() !== kept.expiresAt?.getTime()) await this.repository.setExpiry(tx, kept.id, expiresAt);
          return { token, shareUrl: this.shareUrl(token), expiresAt: iso(expiresAt) };
        }
      }
      if ((await this.repository.countLiveLocked(tx, target)) >= MAX_LIVE_LINKS) {
        throw new DomainError('RATE_LIMITED', `At most ${MAX_LIVE_LINKS} live links per file or cut: revoke one first`, { retryAfterSeconds: 60 });
      }
      const id = randomUUID();
      const token = randomToken();
      const tokenSealed = reuse ? seal(this.secret, SHARE_TOKEN_PURPOSE, id, token) : null;
      await this.repository.insert(tx, { id, tokenHash: hashToken(token), tokenSealed, ...target, ...shareOptions, expiresAt: requestedExpiry, createdBy: principal.userId });
      const event =
        'fileId' in target
          ? projectEvent(principal, projectId, 'file.shared', { fileId: target.fileId, expiresAt: iso(requestedExpiry) })
          : projectEvent(principal, projectId, 'cut.shared', { cutId: target.cutId, expiresAt: iso(requestedExpiry) });
      await this.events.publish(tx, event);
      return { token, shareUrl: this.shareUrl(token), expiresAt: iso(requestedExpiry) };
    });
  }

  /** Every link of a file: its uploader or a project ADMIN, so nobody cuts off links others sent out. */
  async revokeAllOfFile(principal: Principal, fileId: string): Promise<RevokeSharesResult> {
    return this.sql.begin(async (tx) => {
      const { role } = await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      const file = await this.files.find(tx, fileId);
      if (!file) throw notFound('File');
      if (file.uploaderId !== principal.userId && role !== 'ADMIN') {
        throw forbidden('Only the uploader or a project ADMIN can revoke the links of this file');
      }
      return { revoked: await this.repository.revokeAll(tx, { fileId }) };
    });
  }

  /** Every link of a cut: a project ADMIN, or a member when every one of them is their own. */
  async revokeAllOfCut(principal: Principal, cutId: string): Promise<RevokeSharesResult> {
    return this.sql.begin(async (tx) => {
      const { role } = await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      if (role !== 'ADMIN' && (await this.repository.hasLinksOfOthers(tx, { cutId }, principal.userId))) {
        throw forbidden('Only a project ADMIN can revoke links of this cut that others made');
      }
      return { revoked: await this.repository.revokeAll(tx, { cutId }) };
    });
  }

  /** The live links of a file or a cut, for its project's members. */
  async list(principal: Principal, target: ShareTarget): Promise<ShareRecord[]> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.requireMember(principal, target, tx);
      const rows = await this.repository.listLive(tx, target);
      return rows.map((row) => ({
        id: row.id,
        createdAt: row.createdAt.toISOString(),
        createdBy: { id: row.createdById, name: row.createdByName },
        expiresAt: iso(row.expiresAt),
        lastAccessedAt: iso(row.lastAccessedAt),
        accessCount: row.accessCount,
        download: row.download,
        plays: row.plays,
        downloads: row.downloads,
      }));
    });
  }

  /** One link: its creator, the uploader of the file it shares, or a project ADMIN. Strangers get 404. */
  async revoke(principal: Principal, linkId: string): Promise<void> {
    await this.sql.begin(async (tx) => {
      const link = await this.repository.lockForDelete(tx, linkId);
      if (!link) throw notFound('Share link');
      const { role } = await this.requireMember(principal, link.target, tx);
      if (link.createdBy === principal.userId || role === 'ADMIN') return this.repository.delete(tx, linkId);
      const file = 'fileId' in link.target ? await this.files.find(tx, link.target.fileId) : null;
      if (file?.uploaderId === principal.userId) return this.repository.delete(tx, linkId);
      throw forbidden('Only the link’s creator, the file’s uploader or a project ADMIN can revoke this link');
    });
  }

  /** Closes a feedback link to new comments, or reopens it: its creator or a project ADMIN. Strangers get 404. */
  async setCommentsClosed(principal: Principal, linkId: string, closed: boolean): Promise<FeedbackLinkState> {
    return this.sql.begin(async (tx) => {
      const link = await this.repository.lockFeedbackLink(tx, linkId);
      if (!link) throw notFound('Share link');
      const { role } = await this.requireMember(principal, link.target, tx);
      if (link.createdBy !== principal.userId && role !== 'ADMIN') {
        throw forbidden('Only the link’s creator or a project ADMIN can close or reopen it to comments');
      }
      await this.repository.setCommentsClosed(tx, linkId, closed);
      return { id: linkId, commentsClosed: closed };
    });
  }

  /** What a working token opens; unknown, revoked and expired tokens, and links of deleted things, are all the same 404. */
  async resolve(token: string): Promise<ResolvedShare> {
    const share = TOKEN_SHAPE.test(token) ? await this.repository.findActive(hashToken(token)) : null;
    if (share && 'fileId' in share) {
      const served = await this.repository.servedVersion(this.sql, share.fileId, share.follow);
      const file = served && (await this.files.findStored(this.sql, served.fileId));
      if (served && file) {
        const { id, createdBy, expiresAt, follow, allowComments, download, commentsClosed } = share;
        return { kind: 'file', linkId: id, createdBy, expiresAt, follow, allowComments, download, commentsClosed, file, version: served.version, seriesFileIds: served.seriesFileIds };
      }
    }
    if (share && 'cutId' in share) {
      const cut = await this.cutContents.cutContent(this.sql, share.cutId);
      if (cut) return { kind: 'cut', linkId: share.id, expiresAt: share.expiresAt, cutId: share.cutId, download: share.download, ...cut };
    }
    throw notFound('Share link');
  }

  /** A feedback link (made with allowComments) as its comments need it; any other link is 404 like a bad token. */
  async feedbackLink(token: string): Promise<FeedbackLink> {
    const share = await this.resolve(token);
    if (share.kind !== 'file' || !share.allowComments) throw notFound('Share link');
    return feedbackLinkOf(share);
  }

  /**
   * The versions a file link shows: on a link that follows its series (`latest`), every version, oldest first
   * (its page compares them, §20); otherwise only its own.
   */
  async versionsOf(share: ResolvedShare & { kind: 'file' }): Promise<StoredFileRow[]> {
    if (share.follow !== 'latest') return [share.file];
    return (await findStoredFileRows(this.sql, { seriesId: share.file.seriesId })).sort((a, b) => a.version - b.version);
  }

  /** One version of a `latest` link's series by its number; any other (or another link) is 404 like a bad token. */
  async versionOf(share: ResolvedShare & { kind: 'file' }, version: number): Promise<StoredFileRow> {
    const found = share.follow === 'latest' ? (await this.versionsOf(share)).find((candidate) => candidate.version === version) : undefined;
    if (!found) throw notFound('Share link');
    return found;
  }

  /** A file of a shared cut, by its id; a file of another cut (or a file link) is 404 like a bad token. */
  fileOf(share: ResolvedShare, fileId: string): StoredFileRow {
    const file = share.kind === 'cut' ? share.files.find((candidate) => candidate.id === fileId) : undefined;
    if (!file) throw notFound('Share link');
    return file;
  }

  /** The ZIP of a cut link. */
  archiveOf(share: ResolvedShare & { kind: 'cut' }): CutArchive {
    return this.archives.archive(share);
  }

  /**
   * Counts one access of a link when the request is one (see countsAsAccess); `download`: it fetches the
   * original or the archive, which a stream-only link refuses (403 DOWNLOAD_DISABLED) and which also counts
   * in the link's downloads.
   */
  async recordAccess(share: ResolvedShare, request: AccessRequest, { download = false }: { download?: boolean } = {}): Promise<void> {
    if (download && !share.download) throw downloadDisabled();
    if (countsAsAccess(request)) await this.repository.countAccess(share.linkId, { download });
  }

  /** Counts a play of the link: a GET of its preview from byte 0 by `client` (a digest of address and User-Agent). */
  async recordPlay(share: ResolvedShare, request: AccessRequest, client: string): Promise<void> {
    if (request.method === 'GET' && (request.range === undefined || /^\s*bytes\s*=\s*0+\s*-/i.test(request.range))) await this.repository.countPlay(share.linkId, client);
  }

  /** The public description of a shared file (no ids, no uploader). */
  describeFile(token: string, { file, expiresAt, version, follow, allowComments, download }: ResolvedShare & { kind: 'file' }): SharedFile {
    return {
      kind: 'file',
      name: file.name,
      type: file.type,
      size: file.size,
      mimeType: file.mimeType,
      createdAt: file.createdAt.toISOString(),
      expiresAt: iso(expiresAt),
      downloadUrl: download ? `${this.config.publicUrl}/api/share/${token}?download=1` : null,
      previewUrl: file.preview === 'done' ? `${this.config.publicUrl}/api/share/${token}/preview` : null,
      download,
      version,
      follow,
      allowComments,
    };
  }

  /** The public description of a shared cut: its name and files (no uploaders, no project). */
  describeCut(token: string, share: ResolvedShare & { kind: 'cut' }): SharedCut {
    const base = `${this.config.publicUrl}/api/share/${token}`;
    return {
      kind: 'cut',
      name: share.name,
      expiresAt: iso(share.expiresAt),
      archiveUrl: share.download ? `${base}/archive` : null,
      download: share.download,
      files: share.files.map((file) => {
        const peaksUrl = file.audio ? `${base}/files/${file.id}/peaks` : null;
        return {
          id: file.id,
          name: file.name,
          type: file.type,
          size: file.size,
          mimeType: file.mimeType,
          audio: file.audio && peaksUrl ? { ...file.audio, peaksUrl } : null,
          downloadUrl: share.download ? `${base}/files/${file.id}?download=1` : null,
          previewUrl: file.preview === 'done' ? `${base}/files/${file.id}/preview` : null,
          peaksUrl,
        };
      }),
    };
  }

  /** A project member's access to what a link shares (its file's or its cut's project); strangers get 404. */
  requireMember(principal: Principal, target: ShareTarget, tx?: Queryable): Promise<Access> {
    return 'fileId' in target
      ? this.access.require(principal, 'file', target.fileId, 'MEMBER', tx)
      : this.access.require(principal, 'cut', target.cutId, 'MEMBER', tx);
  }

  private shareUrl(token: string): string {
    return `${this.config.publicUrl}/share/${token}`;
  }
}
