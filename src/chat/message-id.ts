import { randomBytes } from 'node:crypto';

const SEQUENCE_LIMIT = 36 ** 4;

let lastMs = 0;
let sequence = 0;

/**
 * A unique message id that sorts (as a string) in order of creation within a process and
 * by time across processes: 9 base-36 chars of milliseconds, 4 of sequence, 6 random, 19 in
 * all. When the clock stands still or goes back, ids keep counting up from the last one.
 */
export function newMessageId(nowMs: number): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    sequence = 0;
  } else if (sequence + 1 < SEQUENCE_LIMIT) {
    sequence += 1;
  } else {
    // The sequence is full for this millisecond: borrow the next one so the length stays fixed.
    lastMs += 1;
    sequence = 0;
  }
  const random = randomBytes(4).readUInt32BE(0).toString(36).padStart(6, '0').slice(-6);
  return lastMs.toString(36).padStart(9, '0') + sequence.toString(36).padStart(4, '0') + random;
}
