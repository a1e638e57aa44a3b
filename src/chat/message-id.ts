import { randomBytes } from 'node:crypto';

const TIME_CHARS = 9;
const SEQUENCE_CHARS = 4;
const RANDOM_CHARS = 6;
const SEQUENCE_LIMIT = 36 ** SEQUENCE_CHARS;
const ID_PATTERN = new RegExp(`^[0-9a-z]{${TIME_CHARS + SEQUENCE_CHARS + RANDOM_CHARS}}$`);
/** A stored id further ahead of the clock than this is not one of ours (an imported name). */
const MAX_LEAD_MS = 24 * 3600 * 1000;

/**
 * Unique message ids that sort (as strings) in order of creation within one generator and
 * by time across processes: 9 base-36 chars of milliseconds, 4 of sequence, 6 random, 19 in
 * all. When the clock stands still or goes back, ids keep counting up from the last one.
 */
export class MessageIds {
  private lastMs = 0;
  private sequence = 0;

  /** Moves the (milliseconds, sequence) counter one step past itself. */
  private step(): void {
    if (this.sequence + 1 < SEQUENCE_LIMIT) {
      this.sequence += 1;
    } else {
      // The sequence is full for this millisecond: borrow the next one so the length stays fixed.
      this.lastMs += 1;
      this.sequence = 0;
    }
  }

  private format(): string {
    const random = randomBytes(4).readUInt32BE(0).toString(36).padStart(RANDOM_CHARS, '0').slice(-RANDOM_CHARS);
    return this.lastMs.toString(36).padStart(TIME_CHARS, '0') + this.sequence.toString(36).padStart(SEQUENCE_CHARS, '0') + random;
  }

  /** A new id, after every id this generator made before. */
  next(nowMs: number): string {
    if (nowMs > this.lastMs) {
      this.lastMs = nowMs;
      this.sequence = 0;
    } else {
      this.step();
    }
    return this.format();
  }

  /**
   * A new id that sorts after `previous` (the newest id stored by any process), so ids of
   * stored messages follow their order of appearance even when the clocks of several processes
   * disagree. `previous` is ignored when it is not an id of this form.
   */
  nextAfter(nowMs: number, previous: string | undefined): string {
    if (previous !== undefined && ID_PATTERN.test(previous)) {
      const previousMs = parseInt(previous.slice(0, TIME_CHARS), 36);
      const previousSequence = parseInt(previous.slice(TIME_CHARS, TIME_CHARS + SEQUENCE_CHARS), 36);
      if (
        previousMs <= nowMs + MAX_LEAD_MS &&
        (previousMs > this.lastMs || (previousMs === this.lastMs && previousSequence > this.sequence))
      ) {
        this.lastMs = previousMs;
        this.sequence = previousSequence;
      }
    }
    return this.next(nowMs);
  }
}
