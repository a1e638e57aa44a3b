import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the background thread copies the write-ahead log into the database file, ms. */
const CHECKPOINT_INTERVAL_MS = 500;
/**
 * Log pages past which a committing writer copies the log itself, as SQLite does by default
 * at 1,000. Under sustained writes the log grows while the thread copies it, so it is never
 * wholly copied at a moment a writer could start it over: the writer then copies what is
 * left each time the log reaches this size. Otherwise the thread keeps the log short.
 */
export const WRITER_CHECKPOINT_PAGES = 10_000;

// CommonJS evaluated in the thread: it needs no file of its own, under tsx or built alike.
const CHECKPOINT_LOOP = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or closing: the next round, or the writer itself, catches up.
  }
}, workerData.intervalMs);
`;

/**
 * Copies a SQLite database's write-ahead log into the database file from a thread of its
 * own. SQLite otherwise does it inside the commit that fills the log past 1,000 pages, and a
 * checkpoint ends with an fsync: with a synchronous driver that stalls the whole server for
 * as long as the disk takes (tens to hundreds of milliseconds on a busy virtual disk). A
 * passive checkpoint never blocks the server's writes. Returns what stops the thread.
 */
export function startCheckpointer(path: string): () => Promise<void> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINT_LOOP, { eval: true, workerData: { driver, path, intervalMs: CHECKPOINT_INTERVAL_MS } });
  // The thread alone never keeps the process alive, and its failure only hands the work back to the writer.
  worker.unref();
  worker.on('error', () => undefined);
  return async () => {
    await worker.terminate();
  };
}
