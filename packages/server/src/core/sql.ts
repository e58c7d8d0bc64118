import type postgres from 'postgres';

// The query handles every repository takes, apart from database.ts (which opens them) so that what database.ts
// uses can name them too.

export type Sql = postgres.Sql;
/** A transaction handle: the same tagged template, bound to one transaction. */
export type Tx = postgres.TransactionSql;
/** Either the pool or a transaction, for repository functions that work in both. */
export type Queryable = Sql | Tx;
