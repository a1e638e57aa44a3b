import { createHash } from 'node:crypto';

/** Where the engine's chance comes from: a whole number from 0 to `bound - 1`. */
export interface RandomSource {
  below(bound: number): number;
}

const twoTo32 = 2 ** 32;

/**
 * The random source of a game, derived from its seed alone so that anyone given the seed can
 * recompute every roll and card: draw number i (from 0) is the 32-bit big-endian word i mod 8 of
 * SHA-256(`<seed>:<floor(i / 8)>`). A number below `bound` is the first draw u with
 * u < bound * floor(2^32 / bound), taken modulo bound (later draws are skipped past).
 */
export function seededRandom(seed: string): RandomSource & { draws(): number } {
  let drawn = 0;
  let block: Buffer | undefined;
  const draw = (): number => {
    const word = drawn % 8;
    if (word === 0 || !block)
      block = createHash('sha256')
        .update(`${seed}:${Math.floor(drawn / 8)}`)
        .digest();
    drawn += 1;
    return block.readUInt32BE(word * 4);
  };
  return {
    below(bound: number): number {
      if (!Number.isInteger(bound) || bound < 1 || bound > twoTo32) throw new RangeError('bound must be 1 to 2^32');
      const limit = bound * Math.floor(twoTo32 / bound);
      for (;;) {
        const u = draw();
        if (u < limit) return u % bound;
      }
    },
    draws: () => drawn,
  };
}

/** The commitment published in `setup` before the first roll: SHA-256 of the seed, in hex. */
export function seedCommitment(seed: string): string {
  return createHash('sha256').update(seed).digest('hex');
}
