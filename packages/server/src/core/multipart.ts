import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Transform, type Readable } from 'node:stream';
import busboy from 'busboy';
import { inject, injectable } from 'tsyringe';
import type { z } from 'zod';
import { PendingObjects } from './pending-objects.js';
import { storeKeys } from './store/index.js';
import { BLOB_STORE } from './di.js';
import type { BlobStore } from './store/index.js';
import { DomainError, invalidField } from './errors.js';
import { cleanFileName, FileIntake } from './file-intake.js';
import type { FileRule } from './file-types.js';
import { isMultipart, validate } from './http.js';
import { Shutdown, shuttingDown } from './shutdown.js';
import type { Reservation } from './space.js';
import { type PartAdmission, UploadLimits } from './upload-limits.js';

export interface ReceiveOptions {
  /** The name of the part that carries the file: `file`, `image`. */
  fileField: string;
  /** Which keys the bytes are stored under: a file's (`files/<id>.<ext>`) or an image's (`images/<id>.<ext>`). */
  storedAs: 'file' | 'image';
  /**
   * What decides whether the upload may start (files/admission.ts, UploadLimits.images): its body's size, its
   * fields as they arrive (the file part waits until every check of the fields before it has passed, so access is
   * checked before any byte is stored), and the file's type by its name.
   */
  admission: PartAdmission;
}

export interface ReceivedFile {
  /** The id the bytes were stored for: the file's id, or the image's name without its extension. */
  id: string;
  /** Where the complete bytes are stored: the caller records them or removes them. */
  key: string;
  /** The client's file name without any path, control characters removed. */
  originalName: string;
  rule: FileRule;
  size: number;
  sha256: string;
}

export interface ReceivedUpload {
  /** Text fields by name (the last value of a repeated name). */
  fields: Record<string, string>;
  /** null when the request had no file part. */
  file: ReceivedFile | null;
}

const LIMITS = { fields: 20, fieldSize: 64 * 1024, parts: 30, headerPairs: 50 };

const malformed = (detail: string): DomainError => invalidField('body', detail);

/**
 * Streams one multipart/form-data upload straight into the store (core/store), never holding it in memory:
 * whether it may start, and the type its name selects, its admission decides before the first byte is written
 * (PartAdmission); the leading bytes are checked as soon as they arrive, the size limit is enforced while
 * streaming (413 the moment it is crossed), and the sha256 is computed on the way. Any failure (refusal,
 * limit, client abort) removes the partial file before the promise rejects.
 *
 * Used by FilesRoutes (uploads) and ImageForms (project covers, vibe images); each records the received
 * file or removes it.
 */
@injectable()
export class Multipart {
  constructor(
    @inject(PendingObjects) private readonly pending: PendingObjects,
    @inject(BLOB_STORE) private readonly store: BlobStore,
    @inject(Shutdown) private readonly shutdown: Shutdown,
    @inject(UploadLimits) private readonly limits: UploadLimits,
  ) {}

  async receive(req: IncomingMessage, res: ServerResponse, options: ReceiveOptions): Promise<ReceivedUpload> {
    if (!isMultipart(req)) throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'This endpoint takes multipart/form-data');
    // Each refusal below is answered before the rest of the body is read: the connection reads and drops it
    // (core/connections.ts), so a client still sending sees the answer.
    const reservation = await options.admission.reserve(Number(req.headers['content-length'] ?? 0));
    // Held until the response has ended: by then the caller has recorded the bytes (or removed them).
    res.once('close', () => reservation.release());
    return this.shutdown.track(this.parse(req, options, reservation));
  }

  /** The text fields of a received upload, checked against `schema`; fields that fail remove the received file. */
  async validFields<S extends z.ZodType>({ fields, file }: ReceivedUpload, schema: S): Promise<z.infer<S>> {
    try {
      return validate(schema, fields);
    } catch (error) {
      if (file) await this.pending.discard(file.key);
      throw error;
    }
  }

  private parse(req: IncomingMessage, options: ReceiveOptions, reservation: Reservation): Promise<ReceivedUpload> {
    return new Promise((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: LIMITS });
      } catch {
        reject(malformed('has no multipart boundary'));
        return;
      }
      const fields: Record<string, string> = {};
      let fieldChecks = Promise.resolve();
      let fileStream: Readable | null = null;
      let storing: Promise<ReceivedFile> | null = null;
      let failure: unknown = null;
      let received = false;

      const fail = (error: unknown): void => {
        // Once the upload is handed over, its file belongs to the caller: nothing here removes it any more.
        if (failure !== null || received) return;
        failure = error;
        req.unpipe(parser);
        fileStream?.destroy();
        parser.destroy();
        // Reject only once the file (partial, or complete when a later field failed) is gone.
        void Promise.allSettled([storing]).then(async ([stored]) => {
          if (stored?.status === 'fulfilled' && stored.value) await this.pending.discard(stored.value.key);
          reject(failure);
        });
      };

      parser.on('field', (name, value, info) => {
        if (failure !== null) return;
        if (info.nameTruncated || info.valueTruncated) return fail(invalidField(name, 'is too long'));
        fields[name] = value;
        fieldChecks = fieldChecks.then(() => options.admission.field(name, value));
        fieldChecks.catch(fail);
      });

      parser.on('file', (name, stream, info) => {
        stream.on('error', () => undefined); // ends `storing`, which reports it
        if (failure !== null) return stream.resume();
        if (name !== options.fileField) return fail(invalidField(name, `is not expected; send the file as "${options.fileField}"`));
        if (storing !== null) return fail(invalidField(options.fileField, 'must be sent once'));
        fileStream = stream;
        storing = (async () => {
          await fieldChecks;
          if (failure !== null) throw failure;
          await options.admission.beforeFile();
          const originalName = cleanFileName(info.filename ?? '', name);
          const rule = options.admission.ruleFor(originalName);
          return this.keep(name, stream, rule, options.admission.rules, originalName, reservation, options.storedAs);
        })();
        storing.catch(fail);
      });

      for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
        parser.on(limit, () => fail(malformed('has too many parts')));
      }
      parser.on('error', () => fail(malformed('is not a complete multipart form')));
      req.on('error', () => fail(malformed('was interrupted')));
      req.on('close', () => {
        if (!req.complete) fail(malformed('was interrupted'));
      });

      parser.on('close', () => {
        if (failure !== null) return;
        void (async () => {
          try {
            await fieldChecks;
            const file = storing === null ? null : await storing;
            if (failure !== null) return;
            received = true;
            resolve({ fields, file });
          } catch (error) {
            fail(error);
          }
        })();
      });

      const cut = () => fail(shuttingDown());
      this.shutdown.signal.addEventListener('abort', cut, { once: true });
      parser.once('close', () => this.shutdown.signal.removeEventListener('abort', cut));

      if (req.destroyed && !req.complete) fail(malformed('was interrupted'));
      else if (this.shutdown.signal.aborted) fail(shuttingDown());
      else req.pipe(parser);
    });
  }

  /**
   * Streams one file part into the store through the upload rules (FileIntake); on failure nothing stays
   * stored. Without a `named` rule, the leading bytes type the file: the key, which holds its extension, is
   * settled only once they have arrived.
   */
  private async keep(
    field: string,
    stream: Readable,
    named: FileRule | null,
    rules: FileRule[],
    originalName: string,
    reservation: Reservation,
    storedAs: 'file' | 'image',
  ): Promise<ReceivedFile> {
    const id = randomUUID();
    const intake = new FileIntake(rules, named);
    let pendingKey: string | null = null;
    const keyOf = async (): Promise<string> => {
      // The store asks once the first bytes are placed (or the body ended): a short file is checked now.
      if (intake.received === 0) throw invalidField(field, 'must not be empty');
      if (intake.rule === null) intake.finish();
      const extension = intake.rule!.extension;
      const key = storedAs === 'file' ? storeKeys.file(id, extension) : storeKeys.image(`${id}.${extension}`);
      // On the ledger before the object can appear: the caller's transaction that records it settles it.
      await this.pending.add(key);
      pendingKey = key;
      return key;
    };
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        try {
          intake.take(chunk);
        } catch (error) {
          return callback(error as Error);
        }
        reservation.add(chunk.length).then(() => callback(null, chunk), callback);
      },
    });
    let stored: { key: string } | null = null;
    try {
      // The upload may have failed before its file part was reached; a destroyed source never ends a pipeline.
      if (stream.destroyed) throw new Error('The upload ended before its file was stored');
      // A failure on either side ends both, a part destroyed without an error (the client went away) included.
      pipeline(stream, meter, () => undefined);
      stored = await this.store.write(keyOf, meter);
      if (intake.received === 0) throw invalidField(field, 'must not be empty');
      intake.finish();
    } catch (error) {
      meter.destroy();
      if (pendingKey !== null) await this.pending.discard(pendingKey);
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      throw this.limits.diskFull();
    }
    return { id, key: stored.key, originalName, rule: intake.rule!, size: intake.received, sha256: intake.runningHash!.digest('hex') };
  }
}
