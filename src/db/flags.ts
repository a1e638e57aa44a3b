/** A 0/1 column, and the answer fields that show one. */
export type Flag = 0 | 1;

/** `value` as a flag, for a number a parameter schema has already held to 0 or 1. */
export function flag(value: number): Flag {
  if (value === 0 || value === 1) return value;
  throw new Error(`${value} is not a 0/1 flag`);
}
