// Loaded with `--import` into a server process: sends SIGTERM to the process itself the moment it writes its
// ready line, as a supervisor (or `pnpm start`'s reader) that acts on the line before the server runs again.
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const written = write(chunk, ...rest);
  if (String(chunk).includes('"msg":"listening on ')) process.kill(process.pid, 'SIGTERM');
  return written;
};
