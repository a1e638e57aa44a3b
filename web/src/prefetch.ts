/**
 * Reads a page starts before it is drawn: the first page's requests leave while the client's
 * script is still rendering, instead of after its first paint. A read is taken once; later
 * reads (a reload, a second visit) go to the server again.
 */
const early = new Map<string, Promise<unknown>>();

export function prefetch<T>(key: string, start: () => Promise<T>): void {
  const read = start();
  // Handled here too, so that a failure nobody has taken yet is not reported as unhandled.
  read.catch(() => undefined);
  early.set(key, read);
}

/** The read started early under this key, or a fresh one. */
export function takeEarly<T>(key: string, start: () => Promise<T>): Promise<T> {
  const read = early.get(key) as Promise<T> | undefined;
  early.delete(key);
  return read ?? start();
}
