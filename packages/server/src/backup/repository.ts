import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql, Tx } from '../core/database.js';
import { SQL } from '../core/di.js';
import { PreviewsRepository } from '../previews/repository.js';

/** A table as a backup holds it: its stored columns (generated ones are computed again) and row count. */
export interface TableRows {
  name: string;
  columns: string[];
  rows: number;
}

/** What one snapshot of the database holds besides the rows: the migrations applied and the stored bytes named. */
export interface Snapshot {
  tables: TableRows[];
  migrations: string[];
  /** Names under DATA_DIR/files and DATA_DIR/images that rows of this snapshot refer to. */
  files: string[];
  images: string[];
  /**
   * The store keys of the previews made (§20), files' (previews/<id>.m4a) and STEM entries'
   * (previews/<id>.<position>.m4a): they go with the backup when they are there.
   */
  previews: string[];
  /**
   * The sha256 the rows record for each stored object, by key (`files/<name>`, `images/<name>`); null for an
   * image stored before its hash was recorded.
   */
  sha256: Map<string, string | null>;
}

/** The applied-migrations ledger: `openDatabase` fills it, so a restore never copies it. */
const MIGRATIONS_TABLE = 'schema_migrations';

@injectable()
export class BackupRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Copies every table out (`COPY … TO STDOUT`, PostgreSQL's text format) in one REPEATABLE READ transaction,
   * so every table is read at the same instant while the server keeps writing. Tables come parents first,
   * the order a restore loads them in.
   */
  async dump(write: (table: TableRows, rows: Readable) => Promise<void>): Promise<Snapshot> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await onlyTables(tx);
      const tables: TableRows[] = [];
      for (const name of await tablesParentsFirst(tx)) {
        const columns = await storedColumns(tx, name);
        const [count] = await tx<{ rows: number }[]>`select count(*)::int as rows from ${tx(name)}`;
        const table = { name, columns, rows: count!.rows };
        await write(table, await tx`copy ${tx(name)} (${tx(columns)}) to stdout`.readable());
        tables.push(table);
      }
      const migrations = await tx<{ version: string }[]>`select version from ${tx(MIGRATIONS_TABLE)} order by version`;
      const files = await tx<{ name: string }[]>`select id || '.' || extension as name from files`;
      const previews = await new PreviewsRepository().made(tx);
      const images = await tx<{ name: string }[]>`select distinct name from image_references`;
      const hashes = await tx<{ key: string; sha256: string | null }[]>`
        select 'files/' || id || '.' || extension as key, sha256 from files
        union all
        select 'images/' || name, sha256 from image_references`;
      const sha256 = new Map<string, string | null>();
      for (const { key, sha256: hash } of hashes) if (!sha256.get(key)) sha256.set(key, hash);
      return {
        tables,
        migrations: migrations.map((r) => r.version),
        files: files.map((r) => r.name),
        images: images.map((r) => r.name),
        previews: previews.map((preview) => preview.key),
        sha256,
      };
    });
  }

  async appliedMigrations(): Promise<string[]> {
    return (await this.sql<{ version: string }[]>`select version from ${this.sql(MIGRATIONS_TABLE)} order by version`).map((r) => r.version);
  }

  /** The tables (the migrations ledger aside) that hold at least one row. */
  async tablesWithRows(): Promise<string[]> {
    return this.sql.begin(async (tx) => {
      await onlyTables(tx);
      const filled: string[] = [];
      for (const name of await tablesParentsFirst(tx)) {
        if (name === MIGRATIONS_TABLE) continue;
        const [row] = await tx<{ filled: boolean }[]>`select exists (select 1 from ${tx(name)}) as filled`;
        if (row!.filled) filled.push(name);
      }
      return filled;
    });
  }

  /**
   * Loads the tables in the order given (parents first) in one transaction, moves identity sequences past
   * the rows loaded, and checks every count: a restore is all or nothing.
   */
  async load<T extends TableRows>(tables: T[], open: (table: T) => Readable, carriedPreviews: ReadonlySet<string>): Promise<{ remade: number }> {
    return this.sql.begin(async (tx) => {
      await onlyTables(tx);
      for (const table of tables) {
        if (table.name === MIGRATIONS_TABLE) continue;
        const target: Writable = await tx`copy ${tx(table.name)} (${tx(table.columns)}) from stdin`.writable();
        await pipeline(open(table), target);
        const [count] = await tx<{ rows: number }[]>`select count(*)::int as rows from ${tx(table.name)}`;
        if (count!.rows !== table.rows) throw new Error(`table ${table.name}: loaded ${count!.rows} rows, the backup lists ${table.rows}`);
      }
      await resetIdentities(tx);
      // A preview the rows call made whose bytes the backup does not carry (a backup made before backups carried
      // previews, or one missing when it was taken) is made again: pending, its job queued in this transaction.
      // A preview is made from its file, so nothing is lost but the CPU time.
      return { remade: await new PreviewsRepository().remakeAllBut(tx, carriedPreviews) };
    });
  }
}

/**
 * The database's own id (see core/data-dir.ts) is never copied: a restored copy is another database, and keeps
 * the id it was given.
 */
const IDENTITY_TABLE = 'database_identity';

/** The current schema's tables (its id aside), each after the tables its foreign keys point to. */
/**
 * A backup holds the tables, trashed rows included (§21): the `live` views first on the connection's
 * search_path (migration 039) would hide those, and COPY cannot read a view.
 */
async function onlyTables(tx: Queryable): Promise<void> {
  await tx`set local search_path to public`;
}

async function tablesParentsFirst(sql: Queryable): Promise<string[]> {
  const tables = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and c.relname <> ${IDENTITY_TABLE}
    order by c.relname`;
  const references = await sql<{ child: string; parent: string }[]>`
    select child.relname as child, parent.relname as parent
    from pg_constraint k
    join pg_class child on child.oid = k.conrelid
    join pg_class parent on parent.oid = k.confrelid
    where k.contype = 'f' and k.connamespace = current_schema()::regnamespace and k.conrelid <> k.confrelid`;
  const ordered: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string) => {
    if (ordered.includes(name) || visiting.has(name)) return;
    visiting.add(name);
    for (const reference of references) if (reference.child === name) visit(reference.parent);
    ordered.push(name);
  };
  for (const table of tables) visit(table.name);
  return ordered;
}

async function storedColumns(tx: Tx, table: string): Promise<string[]> {
  const columns = await tx<{ name: string }[]>`
    select attname as name from pg_attribute
    where attrelid = ${table}::regclass and attnum > 0 and not attisdropped and attgenerated = ''
    order by attnum`;
  return columns.map((c) => c.name);
}

async function resetIdentities(tx: Tx): Promise<void> {
  const identities = await tx<{ table: string; column: string }[]>`
    select c.relname as table, a.attname as column
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    where c.relnamespace = current_schema()::regnamespace and a.attidentity <> '' and not a.attisdropped`;
  for (const { table, column } of identities) {
    await tx`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${tx(column)}) from ${tx(table)}), 0) + 1, false)`;
  }
}
