import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { MarkerFormat } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { entryName, zipArchive } from '../archives/zip.js';
import type { Principal } from '../core/auth-guard.js';
import { invalidField, notFound } from '../core/errors.js';
import { ObjectMissing } from '../core/store/index.js';
import type { ResponseWriter } from '../core/response-writer.js';
import { type MadeAttachment, sendMadeAttachment, type StoredBytes } from '../core/transfer.js';
import { FilesService } from '../files/service.js';
import { audacityLabels, csvSheet, jsonMarkers, markersOf, midiMarkers, reaperProject, UnplaceableMarker } from './markers.js';
import { CommentsService } from './service.js';
import { NotAWav, planWavExport, type Segment, type WavExport } from './wav-cues.js';

export interface MarkerExportRequest {
  format: MarkerFormat;
  offsetMs: number;
  status: 'open' | 'all';
  versions: 'this' | 'series';
}

/** A file's comments as a marker file, answered as an attachment of exact length. */
@injectable()
export class MarkerExports {
  constructor(
    @inject(CommentsService) private readonly comments: CommentsService,
    @inject(FilesService) private readonly files: FilesService,
  ) {}

  async send(req: IncomingMessage, res: ServerResponse, principal: Principal, fileId: string, request: MarkerExportRequest): Promise<void> {
    let answer: MadeAttachment;
    try {
      answer = await this.attachment(principal, fileId, request);
    } catch (error) {
      if (error instanceof UnplaceableMarker) throw invalidField('format', error.message);
      throw error;
    }
    await sendMadeAttachment(req, res, answer);
  }

  private async attachment(principal: Principal, fileId: string, request: MarkerExportRequest): Promise<MadeAttachment> {
    const file = await this.files.get(principal, fileId);
    const stored = await this.files.bytes(principal, fileId);
    const extension = path.extname(stored.key).slice(1);
    const base = stored.downloadName.slice(0, stored.downloadName.length - extension.length - 1);
    const comments = await this.comments.exportable(principal, fileId, request);
    const markers = markersOf(comments, request.offsetMs);
    const text = (contentType: string, fileName: string, content: string | Uint8Array): MadeAttachment => {
      const bytes = Buffer.from(content);
      return { contentType, fileName, length: bytes.length, write: async (writer) => writer.write(bytes) };
    };

    switch (request.format) {
      case 'midi':
        return text('audio/midi', `${base}.mid`, midiMarkers(markers));
      case 'audacity':
        return text('text/plain; charset=utf-8', `${base}.txt`, audacityLabels(markers));
      case 'csv':
        return text('text/csv; charset=utf-8', `${base}.csv`, csvSheet(comments, request.offsetMs));
      case 'json': {
        const document = { file: { id: file.id, name: file.name }, offsetMs: request.offsetMs, markers: jsonMarkers(comments, request.offsetMs) };
        return text('application/json; charset=utf-8', `${base}.json`, JSON.stringify(document));
      }
      case 'rpp': {
        if (file.type !== 'CUT') throw invalidField('format', 'rpp places an audio file in a REAPER project: this file is not audio');
        // Both at the ZIP's root whatever the display name holds (`/`, `..`, `:`), as a cut archive names them.
        const mixName = entryName(stored.downloadName);
        const project = Buffer.from(reaperProject(markers, { fileName: mixName, extension, durationMs: file.audio?.durationMs ?? null }));
        const zip = zipArchive([
          { name: entryName(`${base}.RPP`), bytes: project, modifiedAt: new Date() },
          { name: mixName, size: stored.size, modifiedAt: stored.modifiedAt, open: () => stored.openReader() },
        ]);
        return { contentType: 'application/zip', fileName: `${base}.zip`, length: zip.size, write: (writer) => zip.write(writer) };
      }
      case 'wav':
        return this.wav(stored, extension, base, markers);
    }
  }

  /** The stored WAV with cue points: the plan is made from its chunk headers (a few reads), the body streamed from it. */
  private async wav(stored: StoredBytes, extension: string, base: string, markers: ReturnType<typeof markersOf>): Promise<MadeAttachment> {
    if (extension.toLowerCase() !== 'wav') throw invalidField('format', 'wav adds cue points to a WAV file: this file is not one');
    let plan: WavExport;
    try {
      plan = await planWavExport(stored, markers);
    } catch (error) {
      if (error instanceof NotAWav) throw invalidField('format', `wav needs a readable WAV file: ${error.message}`);
      if (error instanceof ObjectMissing) throw notFound('File');
      throw error;
    }
    return { contentType: 'audio/wav', fileName: `${base}.wav`, length: plan.length, write: (writer) => writeSegments(writer, stored, plan.segments) };
  }
}

/** The WAV with cues: made chunks and ranges of the stored file, in order. */
async function writeSegments(writer: ResponseWriter, stored: StoredBytes, segments: Segment[]): Promise<void> {
  for (const segment of segments) {
    if (writer.closed) return;
    if ('bytes' in segment) writer.write(segment.bytes);
    else if (segment.to > segment.from) {
      const reader = await stored.openReader({ start: segment.from, end: segment.to - 1 });
      try {
        await writer.copy(reader, segment.to - segment.from);
      } finally {
        await reader.close();
      }
    }
  }
}
