import { inject, injectable } from 'tsyringe';
import { SQL } from '../core/di.js';
import { JOB_KINDS } from '../core/job-kinds.js';
import { enqueue } from '../core/jobs-repository.js';
import type { Queryable, Sql } from '../core/sql.js';

export interface EmailRow {
  id: string;
  kind: string;
  toAddress: string;
  /** Sealed content; null once sent. */
  content: Buffer | null;
  sentAt: Date | null;
}

/** Sent mails' rows (without their content) are kept this long, so a late retry of a sent one finds it sent. */
const SENT_RETENTION = '30 days';

@injectable()
export class EmailsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** In the caller's transaction: the mail and the job that sends it; a rollback leaves neither. */
  async insert(tx: Queryable, row: { id: string; kind: string; toAddress: string; content: Buffer }): Promise<void> {
    await tx`insert into emails (id, kind, to_address, content) values (${row.id}, ${row.kind}, ${row.toAddress}, ${row.content})`;
    await enqueue(tx, JOB_KINDS.email, { messageId: row.id });
  }

  async find(id: string): Promise<EmailRow | null> {
    const [row] = await this.sql<EmailRow[]>`select id, kind, to_address, content, sent_at from emails where id = ${id}`;
    return row ?? null;
  }

  async setContent(id: string, content: Buffer): Promise<void> {
    await this.sql`update emails set content = ${content} where id = ${id}`;
  }

  /** Sent: the content (and any link in it) goes; older sent rows are dropped. */
  async markSent(id: string): Promise<void> {
    await this.sql`update emails set sent_at = now(), content = null where id = ${id}`;
    await this.sql`delete from emails where sent_at < now() - ${SENT_RETENTION}::interval`;
  }
}
