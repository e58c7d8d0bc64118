import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import yazl from 'yazl';

/** Writes a deflated ZIP (as a DAW's export is) of local files under their entry names. */
export async function writeZip(zipPath: string, files: Record<string, string>): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const [entry, file] of Object.entries(files)) zip.addFile(file, entry);
  zip.end();
  await finished(zip.outputStream.pipe(createWriteStream(zipPath)));
}
