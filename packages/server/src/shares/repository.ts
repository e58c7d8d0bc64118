import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

/** What a link shares: one file, or one cut (its files when the link is opened). */
export type ShareTarget = { fileId: string } | { cutId: string };

/** Which version a file link serves: the one it was made of, or the newest of its series at each access. */
export type ShareFollow = 'this' | 'latest';

/** How a link was made: what it serves, whether whoever holds it may comment, and whether the original downloads. */
export interface ShareOptions {
  follow: ShareFollow;
  allowComments: boolean;
  /** false: a stream-only link (§20), serving the preview and the page only. */
  download: boolean;
}

/** Within this long, a client's preview fetches on one link are one play (§20). */
export const PLAY_WINDOW_MINUTES = 30;

/** A working link: its id, what it shares, how, who made it and when it stops working (null: never). */
export type ActiveShare = ShareTarget & ShareOptions & { id: string; createdBy: string; expiresAt: Date | null; commentsClosed: boolean };

/** The version a file link serves now, and the versions of its series. */
export interface ServedVersion {
  fileId: string;
  version: number;
  seriesFileIds: string[];
}

/** A link its creator may be handed again: its token sealed (`core/sealed.ts`) under its id. */
export interface ReusableShare {
  id: string;
  tokenSealed: Buffer;
  expiresAt: Date | null;
}

/** A live link as members list it (never its token). */
export interface ShareListRow {
  id: string;
  createdAt: Date;
  createdById: string;
  createdByName: string;
  expiresAt: Date | null;
  lastAccessedAt: Date | null;
  accessCount: number;
  download: boolean;
  plays: number;
  downloads: number;
}

/** A link as its revocation needs it: who made it, and what it shares. */
export interface ShareOwnership {
  createdBy: string;
  target: ShareTarget;
}

/** A row's target: exactly one of its file_id and cut_id is set. */
const targetOf = (row: { fileId: string | null; cutId: string | null }): ShareTarget =>
  row.fileId !== null ? { fileId: row.fileId } : { cutId: row.cutId! };

const targetCondition = (tx: Queryable, target: ShareTarget) =>
  'fileId' in target ? tx`file_id = ${target.fileId}` : tx`cut_id = ${target.cutId}`;

@injectable()
export class SharesRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async insert(
    tx: Queryable,
    link: ShareTarget & ShareOptions & { id: string; tokenHash: string; tokenSealed: Buffer | null; expiresAt: Date | null; createdBy: string },
  ): Promise<void> {
    await tx`insert into share_links ${tx(link)}`;
  }

  /**
   * The newest live link of the target that `createdBy` made for reuse with these options, locked, so a
   * parallel request with reuse waits and finds the same one.
   */
  async findReusableLocked(tx: Queryable, target: ShareTarget, createdBy: string, options: ShareOptions): Promise<ReusableShare | null> {
    const [row] = await tx<ReusableShare[]>`
      select id, token_sealed, expires_at from share_links
      where ${targetCondition(tx, target)} and created_by = ${createdBy} and token_sealed is not null
        and follow = ${options.follow} and allow_comments = ${options.allowComments} and download = ${options.download}
        and (expires_at is null or expires_at > now())
      order by created_at desc, id limit 1
      for update`;
    return row ?? null;
  }

  async setExpiry(tx: Queryable, id: string, expiresAt: Date | null): Promise<void> {
    await tx`update share_links set expires_at = ${expiresAt} where id = ${id}`;
  }

  /**
   * How many links of a file or a cut still work, under a lock on the file's or cut's row, so parallel
   * creations count each other.
   */
  async countLiveLocked(tx: Queryable, target: ShareTarget): Promise<number> {
    if ('fileId' in target) await tx`select 1 from files where id = ${target.fileId} for no key update`;
    else await tx`select 1 from cuts where id = ${target.cutId} for no key update`;
    const [row] = await tx<{ count: number }[]>`
      select count(*)::int as count from share_links where ${targetCondition(tx, target)} and (expires_at is null or expires_at > now())`;
    return row!.count;
  }

  /** Deletes every link of a file or a cut; answers how many there were. */
  async revokeAll(tx: Queryable, target: ShareTarget): Promise<number> {
    const result = await tx`delete from share_links where ${targetCondition(tx, target)}`;
    return result.count;
  }

  /** Whether a file's or cut's links include one made by someone other than `userId`. */
  async hasLinksOfOthers(tx: Queryable, target: ShareTarget, userId: string): Promise<boolean> {
    const [other] = await tx`select 1 from share_links where ${targetCondition(tx, target)} and created_by <> ${userId} limit 1`;
    return other !== undefined;
  }

  /** The links of a file or a cut that still work, oldest first, with their makers. */
  async listLive(tx: Queryable, target: ShareTarget): Promise<ShareListRow[]> {
    return tx<ShareListRow[]>`
      select s.id, s.created_at, u.id as created_by_id, u.name as created_by_name, s.expires_at, s.last_accessed_at, s.access_count,
             s.download, s.plays, s.downloads
      from share_links s join users u on u.id = s.created_by
      where ${targetCondition(tx, target)} and (s.expires_at is null or s.expires_at > now())
      order by s.created_at, s.id`;
  }

  /** Locks one link for its revocation; null when there is none. */
  async lockForDelete(tx: Queryable, id: string): Promise<ShareOwnership | null> {
    const [row] = await tx<{ createdBy: string; fileId: string | null; cutId: string | null }[]>`
      select created_by, file_id, cut_id from share_links where id = ${id} for update`;
    return row ? { createdBy: row.createdBy, target: targetOf(row) } : null;
  }

  /** Locks a live feedback link (made with allowComments, not expired); null when there is none. */
  async lockFeedbackLink(tx: Queryable, id: string): Promise<ShareOwnership | null> {
    const [row] = await tx<{ createdBy: string; fileId: string | null; cutId: string | null }[]>`
      select created_by, file_id, cut_id from share_links
      where id = ${id} and allow_comments and (expires_at is null or expires_at > now()) for update`;
    return row ? { createdBy: row.createdBy, target: targetOf(row) } : null;
  }

  /** Closes a feedback link to new comments (keeping when it was first closed), or reopens it. */
  async setCommentsClosed(tx: Queryable, id: string, closed: boolean): Promise<void> {
    await tx`update share_links set comments_closed_at = ${closed ? tx`coalesce(comments_closed_at, now())` : null} where id = ${id}`;
  }

  async delete(tx: Queryable, id: string): Promise<void> {
    await tx`delete from share_links where id = ${id}`;
  }

  /**
   * The link with this token hash, unless it has expired (links of deleted files and cuts go with them) or its
   * creator's account is deactivated: suspended, not deleted, so activating the account brings it back.
   */
  async findActive(tokenHash: string): Promise<ActiveShare | null> {
    const [row] = await this.sql<
      { id: string; fileId: string | null; cutId: string | null; createdBy: string; expiresAt: Date | null; follow: ShareFollow; allowComments: boolean; download: boolean; commentsClosed: boolean }[]
    >`
      select s.id, s.file_id, s.cut_id, s.created_by, s.expires_at, s.follow, s.allow_comments, s.download, s.comments_closed_at is not null as comments_closed
      from share_links s join users u on u.id = s.created_by
      where s.token_hash = ${tokenHash} and (s.expires_at is null or s.expires_at > now()) and u.deactivated_at is null`;
    if (!row) return null;
    const { fileId, cutId, ...link } = row;
    return { ...link, ...targetOf({ fileId, cutId }) };
  }

  /** The version a file link serves: its own file, or (follow "latest") the highest version of its series. */
  async servedVersion(tx: Queryable, fileId: string, follow: ShareFollow): Promise<ServedVersion | null> {
    const versions = await tx<{ id: string; version: number }[]>`
      select id, version from files where series_id = (select series_id from files where id = ${fileId}) order by version`;
    const served = follow === 'latest' ? versions.at(-1) : versions.find((candidate) => candidate.id === fileId);
    return served ? { fileId: served.id, version: served.version, seriesFileIds: versions.map((candidate) => candidate.id) } : null;
  }

  /** One access: a single-row update, whatever the size of what is sent; a download of the original or the archive also counts as one. */
  async countAccess(id: string, { download }: { download: boolean }): Promise<void> {
    await this.sql`
      update share_links set access_count = access_count + 1, last_accessed_at = now(),
                             downloads = downloads + ${download ? 1 : 0}
      where id = ${id}`;
  }

  /**
   * A preview fetch from offset 0 by `client`: a play when the link had not seen that client within
   * PLAY_WINDOW_MINUTES (the row's time is then moved on), else none. One statement, so parallel fetches of one
   * client count once.
   */
  async countPlay(id: string, client: string): Promise<void> {
    await this.sql`
      with seen as (
        insert into share_link_listeners as l (share_link_id, client, seen_at) values (${id}, ${client}, now())
        on conflict (share_link_id, client) do update set seen_at = now()
          where l.seen_at < now() - make_interval(mins => ${PLAY_WINDOW_MINUTES})
        returning 1
      )
      update share_links set plays = plays + 1 where id = ${id} and exists (select 1 from seen)`;
  }
}
