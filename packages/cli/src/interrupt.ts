// What band says when Ctrl-C stops it: band.cts exits at once on SIGINT, so work that a later run can
// continue (an upload) leaves the sentence here while it runs.
let hint: string | undefined;

/** What Ctrl-C during an upload (band file upload, band push) prints after "interrupted: ". */
export const UPLOAD_RESUME_HINT = 'run the same command again to finish the upload (a large file resumes where it stopped)';

/** Runs `work` with `sentence` as what Ctrl-C prints while it runs. */
export async function withInterruptHint<T>(sentence: string, work: () => Promise<T>): Promise<T> {
  hint = sentence;
  try {
    return await work();
  } finally {
    hint = undefined;
  }
}

/** The line to print on Ctrl-C: "interrupted", and how to go on when there is a way. */
export function interruptedLine(): string {
  return hint ? `interrupted: ${hint}` : 'interrupted';
}
