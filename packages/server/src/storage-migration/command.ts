import path from 'node:path';
import { compose } from '../composition.js';
import { systemClock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { openDatabase } from '../core/database.js';
import { Logger } from '../core/logger.js';
import { FsBlobStore } from '../core/store/fs-store.js';
import { openBlobStore } from '../core/store/index.js';
import { StorageMigrationRepository } from './repository.js';
import { StorageMigration } from './service.js';

/** Beside the stored files it reads: DATA_DIR/migrate-storage.jsonl, one verified key a line. */
const PROGRESS_FILE = 'migrate-storage.jsonl';

/**
 * `migrate-storage --to s3`, run with the settings the server will have after the switch (STORAGE=s3 and the
 * S3_* settings) and the DATA_DIR and database it has now. Safe beside a running server: it reads DATA_DIR
 * and the database, and only adds objects to the bucket. Exit codes: 0 every object is in the bucket, 1 some
 * did not match their sha256 (or the command was refused), 2 a wrong call.
 */
export async function migrateStorage(config: Config): Promise<number> {
  const storage = config.storage;
  if (storage.driver !== 's3') {
    process.stderr.write('migrate-storage refused: run it with STORAGE=s3 and the S3_* settings the server will use after the switch\n');
    return 1;
  }
  const log = new Logger('warn');
  const database = await openDatabase(config, log);
  let target: Awaited<ReturnType<typeof openBlobStore>> | null = null;
  try {
    target = await openBlobStore(config);
    const objects = await compose({ config, log, database, clock: systemClock }).resolve(StorageMigrationRepository).recordedObjects();
    const targetName = `s3 ${storage.endpoint ?? 'aws'} ${storage.bucket} ${storage.prefix}`;
    const migration = new StorageMigration(new FsBlobStore(config.dataDir), target, targetName, path.join(config.dataDir, PROGRESS_FILE), (key, outcome) =>
      process.stdout.write(`${outcome}\t${key}\n`),
    );
    const report = await migration.run(objects);
    process.stderr.write(
      `${report.copied + report.present} of ${objects.length} stored object(s) in bucket ${storage.bucket}: ${report.copied} copied now, ${report.present} there before; ` +
        `${report.missing.length} missing locally, ${report.mismatched.length} not matching their sha256\n`,
    );
    if (report.mismatched.length > 0) return 1;
    process.stderr.write(
      'Objects stored after this run began are not copied: stop the server, run migrate-storage --to s3 again (it copies only those), then start it with STORAGE=s3\n',
    );
    return 0;
  } finally {
    target?.close();
    await database.close();
  }
}
