import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { MarkerFormat } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { zipArchive } from '../archives/zip.js';
import type { Principal } from '../core/auth-guard.js';
import { invalidField } from '../core/errors.js';
import { type MadeAttachment, sendMadeAttachment } from '../core/transfer.js';
import { FilesService } from '../files/service.js';
import { audacityLabels, csvSheet, jsonMarkers, markersOf, midiMarkers, reaperProject } from './markers.js';
import { CommentsService } from './service.js';
import { NotAWav, readWavLayout, type Segment, wavWithCues } from './wav-cues.js';

export interface MarkerExportRequest {
  format: MarkerFormat;
  offsetMs: number;
  status: 'open' | 'all';
  versions: 'this' | 'series';
}


/** A stored file's bytes are read in pieces of this size, as archives read them. */
const READ_CHUNK_BYTES = 256 * 1024;

/** A file's comments as a marker file, answered as an attachment of exact length. */
@injectable()
export class MarkerExports {
  constructor(
    @inject(CommentsService) private readonly comments: CommentsService,
    @inject(FilesService) private readonly files: FilesService,
  ) {}

  async send(req: IncomingMessage, res: ServerResponse, principal: Principal, fileId: string, request: MarkerExportRequest): Promise<void> {
    const file = await this.files.get(principal, fileId);
    const stored = await this.files.bytes(principal, fileId);
    const extension = path.extname(stored.path).slice(1);
    const base = stored.downloadName.slice(0, stored.downloadName.length - extension.length - 1);
    const comments = await this.comments.exportable(principal, fileId, request);
    const markers = markersOf(comments, request.offsetMs);
    const text = (contentType: string, fileName: string, content: string | Uint8Array): MadeAttachment => {
      const bytes = Buffer.from(content);
      return { contentType, fileName, length: bytes.length, body: () => Readable.from([bytes]) };
    };

    let answer: MadeAttachment;
    switch (request.format) {
      case 'midi':
        answer = text('audio/midi', `${base}.mid`, midiMarkers(markers));
        break;
      case 'audacity':
        answer = text('text/plain; charset=utf-8', `${base}.txt`, audacityLabels(markers));
        break;
      case 'csv':
        answer = text('text/csv; charset=utf-8', `${base}.csv`, csvSheet(comments, request.offsetMs));
        break;
      case 'json': {
        const document = { file: { id: file.id, name: file.name }, offsetMs: request.offsetMs, markers: jsonMarkers(comments, request.offsetMs) };
        answer = text('application/json; charset=utf-8', `${base}.json`, JSON.stringify(document));
        break;
      }
      case 'rpp': {
        if (file.type !== 'CUT') throw invalidField('format', 'rpp places an audio file in a REAPER project: this file is not audio');
        const project = Buffer.from(reaperProject(markers, { fileName: stored.downloadName, extension, durationMs: file.audio?.durationMs ?? null }));
        const zip = zipArchive([
          { name: `${base}.RPP`, bytes: project, modifiedAt: new Date() },
          { name: stored.downloadName, size: stored.size, modifiedAt: stored.modifiedAt, open: () => createReadStream(stored.path, { highWaterMark: READ_CHUNK_BYTES }) },
        ]);
        answer = { contentType: 'application/zip', fileName: `${base}.zip`, length: zip.size, body: () => zip.open() };
        break;
      }
      case 'wav':
        answer = await this.wav(stored.path, stored.size, extension, base, markers);
        break;
    }
    await sendMadeAttachment(req, res, answer);
  }

  /** The stored WAV with cue points: the plan is made from its chunk headers, the body streamed from it. */
  private async wav(storedPath: string, size: number, extension: string, base: string, markers: ReturnType<typeof markersOf>): Promise<MadeAttachment> {
    if (extension.toLowerCase() !== 'wav') throw invalidField('format', 'wav adds cue points to a WAV file: this file is not one');
    const handle = await open(storedPath);
    let segments: Segment[];
    let length: number;
    try {
      const read = async (offset: number, count: number) => {
        const buffer = Buffer.alloc(count);
        const { bytesRead } = await handle.read(buffer, 0, count, offset);
        return buffer.subarray(0, bytesRead);
      };
      ({ segments, length } = wavWithCues(await readWavLayout(read, size), markers));
    } catch (error) {
      if (error instanceof NotAWav) throw invalidField('format', `wav needs a readable WAV file: ${error.message}`);
      throw error;
    } finally {
      await handle.close();
    }
    return { contentType: 'audio/wav', fileName: `${base}.wav`, length, body: () => Readable.from(segmentBytes(storedPath, segments)) };
  }
}

async function* segmentBytes(storedPath: string, segments: Segment[]): AsyncGenerator<Buffer> {
  for (const segment of segments) {
    if ('bytes' in segment) yield segment.bytes;
    else if (segment.to > segment.from) {
      yield* createReadStream(storedPath, { start: segment.from, end: segment.to - 1, highWaterMark: READ_CHUNK_BYTES });
    }
  }
}
