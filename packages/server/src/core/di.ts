import type { InjectionToken } from 'tsyringe';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Sql } from './database.js';
import type { Logger } from './logger.js';
import type { BlobStore } from './store/blob-store.js';

// Values registered once in the composition root (composition.ts). Classes are injected by their own constructor.
export const CONFIG: InjectionToken<Config> = Symbol('Config');
export const SQL: InjectionToken<Sql> = Symbol('Sql');
/** Database.locks: the connection that holds session-level advisory locks across requests. */
export const LOCKS_SQL: InjectionToken<Sql> = Symbol('LocksSql');
export const LOGGER: InjectionToken<Logger> = Symbol('Logger');
/** The secret that signs access tokens and other short-lived signed values. */
export const SIGNING_SECRET: InjectionToken<string> = Symbol('SigningSecret');
export const CLOCK: InjectionToken<Clock> = Symbol('Clock');
/** Where stored bytes live (core/store): the local directory or an S3 bucket, chosen by STORAGE. */
export const BLOB_STORE: InjectionToken<BlobStore> = Symbol('BlobStore');
