// The web build's upload sources (swapped in for upload-source.ts by tsup): a Blob or File, bytes, or a stream of
// bytes, for the one sender it has (multipart.web.ts). No node:* module and no Buffer.

/** What the web build uploads: a Blob or File (a File keeps its name), bytes, or a stream of bytes. */
export type FileInput = Blob | Uint8Array | ReadableStream<Uint8Array>;

/** An upload's `ifChanged`: the web build does not hash a file (it would read it into memory), so only the caller's sha256 (hex). */
export type IfChanged = { sha256: string };

export interface FileSource {
  filename: string | undefined;
  size: number | null;
  open(): Blob | ReadableStream<Uint8Array>;
  replayable: boolean;
}

export async function fileSource(input: FileInput, filename?: string): Promise<FileSource> {
  if (input instanceof ReadableStream) return { filename, size: null, open: () => input, replayable: false };
  const blob = input instanceof Blob ? input : new Blob([input as Uint8Array<ArrayBuffer>]);
  if (!(blob instanceof Blob)) throw new TypeError('file: expected a Blob, a File, a Uint8Array or a ReadableStream');
  return { filename: filename ?? ((input as Partial<File>).name || undefined), size: blob.size, open: () => blob, replayable: true };
}

/** `ifChanged: true` hashes the file before sending it: the web build would have to read it into memory, so it refuses. */
export async function sha256Of(_source: FileSource, _signal: AbortSignal | undefined): Promise<string> {
  throw new TypeError('upload: `ifChanged` is not available in the web build');
}
