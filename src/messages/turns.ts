import type { Kysely, Transaction } from 'kysely';
import { ownTransaction, type Database, type InTransaction } from '../db/connection.js';
import type { Tables } from '../db/tables.js';
import type { Services } from '../services.js';
import { framesOf, publishFrames, type ConversationEvent, type PartyFrame } from './live.js';
import { leaveAnnouncingTurns, takeAnnouncingTurns } from './queries.js';

/** Records an event of the transaction: what its parties are told once it has committed. */
export type Announce = (event: ConversationEvent) => Promise<void>;

/**
 * Runs `work` in one transaction and tells the parties of the events it records (`announce`,
 * called once their rows are locked) only after it has committed, each user's events in the
 * order of their ids, in every process, once.
 *
 * Every event of a user is recorded under the lock of the user's row (`lockParties`), so a
 * user's events commit in id order. Recording one also takes the user's announcing turn, still
 * under that lock, and the turn is let go only once the event is told: a later event of the
 * user cannot commit before an earlier one has been told (PostgreSQL: session advisory locks,
 * which outlive the commit, held by the connection of the transaction, or for a transaction
 * opened by someone else, by one more connection; SQLite, one process running one transaction
 * at a time: a queue per user in memory). A transaction that does not commit tells nothing.
 */
export async function inAnnouncedTransaction<T>(
  services: Services,
  work: (trx: Transaction<Tables>, announce: Announce) => Promise<T>,
  inTransaction?: InTransaction,
): Promise<T> {
  const { db } = services;
  if (db.dialect !== 'postgres') return announcedLocally(services, work, inTransaction ?? ownTransaction(db));
  return db.kysely.connection().execute(async (connection) => {
    const locked: number[] = [];
    const frames: PartyFrame[] = [];
    const transaction = inTransaction ?? ((run) => connection.transaction().execute(run));
    try {
      const result = await transaction((trx) =>
        work(trx, async (event) => {
          const ids = [...new Set(event.parties)].filter((id) => !locked.includes(id)).sort((a, b) => a - b);
          // Counted before they are taken, so that a statement failing half way lets go of what it took.
          locked.push(...ids);
          // On the transaction's own connection, or the one held beside someone else's transaction.
          if (ids.length > 0) await takeAnnouncingTurns(inTransaction ? connection : trx, ids);
          frames.push(...(await framesOf(trx, event)));
        }),
      );
      await publishFrames(services, frames);
      return result;
    } finally {
      if (locked.length > 0) await unlock(services, connection, locked);
    }
  });
}

async function unlock(services: Services, connection: Kysely<Tables>, ids: number[]): Promise<void> {
  try {
    await leaveAnnouncingTurns(connection, ids);
  } catch (error) {
    services.log.error({ err: error }, 'the announcing turns of private messages could not be let go');
  }
}

/** The tail of each user's announcing turns in this process, per database. */
const localTails = new WeakMap<Database, Map<number, Promise<void>>>();

async function announcedLocally<T>(
  services: Services,
  work: (trx: Transaction<Tables>, announce: Announce) => Promise<T>,
  inTransaction: InTransaction,
): Promise<T> {
  const tails = localTails.get(services.db) ?? localTails.set(services.db, new Map()).get(services.db)!;
  const frames: PartyFrame[] = [];
  const mine = new Set<number>();
  const earlier: Promise<void>[] = [];
  let leave!: () => void;
  const left = new Promise<void>((resolve) => (leave = resolve));
  // Over once the turns before this transaction's are over and it has let go of its own.
  let over = left;
  try {
    const result = await inTransaction((trx) =>
      work(trx, async (event) => {
        for (const id of event.parties.filter((party) => !mine.has(party))) {
          mine.add(id);
          const tail = tails.get(id);
          if (tail) earlier.push(tail);
        }
        over = Promise.all([left, ...earlier]).then(() => undefined);
        for (const id of mine) tails.set(id, over);
        frames.push(...(await framesOf(trx, event)));
      }),
    );
    await Promise.all(earlier);
    await publishFrames(services, frames);
    return result;
  } finally {
    leave();
    const last = over;
    void last.then(() => {
      for (const id of mine) if (tails.get(id) === last) tails.delete(id);
    });
  }
}
