import { randomBytes } from 'node:crypto';

const TIME_CHARS = 9;
const SEQUENCE_CHARS = 4;
const RANDOM_CHARS = 6;
const SEQUENCE_LIMIT = 36 ** SEQUENCE_CHARS;
const ID_PATTERN = new RegExp(`^[0-9a-z]{${TIME_CHARS + SEQUENCE_CHARS + RANDOM_CHARS}}$`);
/** A stored id further ahead of the clock than this is not one of ours (an imported name). */
const MAX_LEAD_MS = 24 * 3600 * 1000;

let lastMs = 0;
let sequence = 0;

/** Moves the (milliseconds, sequence) counter one step past itself. */
function step(): void {
  if (sequence + 1 < SEQUENCE_LIMIT) {
    sequence += 1;
  } else {
    // The sequence is full for this millisecond: borrow the next one so the length stays fixed.
    lastMs += 1;
    sequence = 0;
  }
}

function format(): string {
  const random = randomBytes(4).readUInt32BE(0).toString(36).padStart(RANDOM_CHARS, '0').slice(-RANDOM_CHARS);
  return lastMs.toString(36).padStart(TIME_CHARS, '0') + sequence.toString(36).padStart(SEQUENCE_CHARS, '0') + random;
}

/**
 * A unique message id that sorts (as a string) in order of creation within a process and
 * by time across processes: 9 base-36 chars of milliseconds, 4 of sequence, 6 random, 19 in
 * all. When the clock stands still or goes back, ids keep counting up from the last one.
 */
export function newMessageId(nowMs: number): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    sequence = 0;
  } else {
    step();
  }
  return format();
}

/**
 * A new id that sorts after `previous` (the newest id stored by any process), so ids of
 * stored messages follow their order of appearance even when the clocks of several processes
 * disagree. `previous` is ignored when it is not an id of this form.
 */
export function newMessageIdAfter(nowMs: number, previous: string | undefined): string {
  if (previous !== undefined && ID_PATTERN.test(previous)) {
    const previousMs = parseInt(previous.slice(0, TIME_CHARS), 36);
    const previousSequence = parseInt(previous.slice(TIME_CHARS, TIME_CHARS + SEQUENCE_CHARS), 36);
    if (previousMs <= nowMs + MAX_LEAD_MS && (previousMs > lastMs || (previousMs === lastMs && previousSequence > sequence))) {
      lastMs = previousMs;
      sequence = previousSequence;
    }
  }
  return newMessageId(nowMs);
}
