/**
 * Ending the command without losing what it printed. To a pipe or a socket
 * Node writes what the reader has not taken yet asynchronously, and
 * process.exit drops what is still queued: a region file on stdout lost its
 * last lines to a slow reader (Node 22 lost them nearly every time).
 */

/** Resolves once what was written to `stream` so far has left this process. */
const flushed = (stream: NodeJS.WriteStream): Promise<void> => new Promise((resolve) => stream.write('', () => resolve()));

/** Exits with `status` once standard output and standard error are written out. */
export async function exitOnceWritten(status: number): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(status);
}
