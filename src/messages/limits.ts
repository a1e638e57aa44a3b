import { ApiError, Code } from '../api/errors.js';
import type { Services } from '../services.js';
import { senderFacts } from './queries.js';

const BURST_WINDOW = 10;
const HOUR = 3600;
const DAY = 86400;

/** Counted uses, given back when the message is refused later or stored nothing. */
export interface TakenLimits {
  giveBack(): Promise<void>;
}

/**
 * Counts a message against the sender's limits, each counted atomically in every process (the
 * shared counters): a burst in any 10 seconds, a sustained rate an hour, and, for an account
 * younger than `youngAccountDays` writing to someone it has no conversation with, the new
 * conversations of the day. Refused with 7 and `retry_after`; a refusal counts nothing.
 */
export async function takeSendLimits(services: Services, senderId: number, receiverId: number): Promise<TakenLimits> {
  const { counters, config } = services;
  const taken: [string, number][] = [];
  const giveBack = async () => {
    await Promise.all(taken.map(([key, window]) => counters.hit(key, window, -1))).catch(() => undefined);
  };
  const take = async (key: string, window: number, max: number, what: string) => {
    const result = await counters.take(key, window, max);
    if (!result.taken) {
      await giveBack();
      throw new ApiError(Code.RATE_LIMIT, `too many private messages: ${what}`, { retry_after: result.resetIn });
    }
    taken.push([key, window]);
  };
  const { im } = config;
  await take(`im:burst:${senderId}`, BURST_WINDOW, im.burst, `at most ${im.burst} in 10 seconds`);
  await take(`im:hour:${senderId}`, HOUR, im.perHour, `at most ${im.perHour} an hour`);
  if (im.youngAccountDays > 0) {
    const facts = await senderFacts(services.db.kysely, senderId, receiverId);
    const young = (facts?.createdAt ?? 0) > Math.floor(services.clock.now() / 1000) - im.youngAccountDays * DAY;
    if (young && !facts?.hasDialog)
      await take(
        `im:new:${senderId}`,
        DAY,
        im.newDialogsPerDay,
        `an account younger than ${im.youngAccountDays} days may start at most ${im.newDialogsPerDay} conversations a day`,
      );
  }
  return { giveBack };
}
