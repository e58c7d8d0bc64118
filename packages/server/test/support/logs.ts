/** One line of the server's JSON log: one object per line on stdout. */
export interface LogLine {
  time: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  [field: string]: unknown;
}

/** The JSON log lines in a process's output; other lines (`listening on …`) are skipped. */
export function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** Waits for the first log line that matches; fails after `timeoutMs` with what was logged. */
export async function waitForLog(output: () => string, match: (line: LogLine) => boolean, timeoutMs = 10_000): Promise<LogLine> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = logLines(output()).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no matching log line within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
