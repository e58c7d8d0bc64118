import type { RevokeSharesResult, SharedFile, ShareLink } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { hashToken, randomToken } from '../core/tokens.js';
import type { Principal } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CONFIG, SQL } from '../core/di.js';
import { forbidden, notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import { type FileRow, FilesRepository } from '../files/repository.js';
import { SharesRepository } from './repository.js';

/** A `randomToken`: 32 random bytes, base64url, 43 characters. Only its hash is stored. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface SharedFileRow {
  file: FileRow;
  expiresAt: Date | null;
}

@injectable()
export class SharesService {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(SQL) private readonly sql: Sql,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(SharesRepository) private readonly repository: SharesRepository,
    @inject(FilesRepository) private readonly files: FilesRepository,
  ) {}

  /** A new link on every call; `expiresIn` seconds, or a link that lasts until revoked. */
  async create(principal: Principal, fileId: string, expiresIn: number | null): Promise<ShareLink> {
    const token = randomToken();
    const expiresAt = expiresIn === null ? null : new Date(Date.now() + expiresIn * 1000);
    await this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      await this.repository.insert(tx, { tokenHash: hashToken(token), fileId, expiresAt, createdBy: principal.userId });
      await this.events.publish(tx, projectEvent(principal, projectId, 'file.shared', { fileId, expiresAt: expiresAt?.toISOString() ?? null }));
    });
    return { token, shareUrl: this.shareUrl(token), expiresAt: expiresAt?.toISOString() ?? null };
  }

  /** Every link of a file: its uploader or a project ADMIN, so nobody cuts off links others sent out. */
  async revokeAll(principal: Principal, fileId: string): Promise<RevokeSharesResult> {
    return this.sql.begin(async (tx) => {
      const { role } = await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      const file = await this.files.find(tx, fileId);
      if (!file) throw notFound('File');
      if (file.uploaderId !== principal.userId && role !== 'ADMIN') {
        throw forbidden('Only the uploader or a project ADMIN can revoke the links of this file');
      }
      return { revoked: await this.repository.revokeAll(tx, fileId) };
    });
  }

  /** The file behind a working token; unknown, revoked and expired tokens are all the same 404. */
  async resolve(token: string): Promise<SharedFileRow> {
    const share = TOKEN_SHAPE.test(token) ? await this.repository.findActive(hashToken(token)) : null;
    const file = share ? await this.files.find(this.sql, share.fileId) : null;
    if (!share || !file) throw notFound('Share link');
    return { file, expiresAt: share.expiresAt };
  }

  /** The public description of a shared file (no ids, no uploader). */
  describe(token: string, { file, expiresAt }: SharedFileRow): SharedFile {
    return {
      name: file.name,
      type: file.type,
      size: file.size,
      mimeType: file.mimeType,
      createdAt: file.createdAt.toISOString(),
      expiresAt: expiresAt?.toISOString() ?? null,
      downloadUrl: `${this.config.publicUrl}/api/share/${token}?download=1`,
    };
  }

  private shareUrl(token: string): string {
    return `${this.config.publicUrl}/share/${token}`;
  }
}
