import { randomInt } from 'node:crypto';
import { ApiError, Code, badParam, rateLimited } from '../api/errors.js';
import type { Executor } from '../db/connection.js';
import { sha256 } from '../infra/secrets.js';
import type { Services } from '../services.js';
import { matchingSteps } from './totp-codes.js';
import { recordTotpStep, replaceRecoveryCodeHashes, useRecoveryCode } from './queries.js';

/** Recovery codes made when two-factor sign-in is switched on; each works once. */
export const RECOVERY_CODE_COUNT = 10;
/** 16 characters of a 32-letter alphabet: 80 bits each. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const RECOVERY_GROUPS = 4;
const RECOVERY_GROUP_LENGTH = 4;

/** Wrong codes a user may send to the methods that check one (enable, disable, reset) per window. */
export const SECOND_FACTOR_LIMIT = { max: 5, windowSeconds: 15 * 60 } as const;

/** Ten new recovery codes, shown once as `abcd-efgh-jkmn-pqrs`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    Array.from({ length: RECOVERY_GROUPS }, () =>
      Array.from({ length: RECOVERY_GROUP_LENGTH }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join(''),
    ).join('-'),
  );
}

/** A recovery code as typed (any case, dashes or spaces), in the one form it is hashed in; null when it cannot be one. */
export function recoveryCodeForm(raw: string): string | null {
  const compact = raw.replace(/[\s-]+/g, '').toLowerCase();
  const pattern = new RegExp(`^[${RECOVERY_ALPHABET}]{${RECOVERY_GROUPS * RECOVERY_GROUP_LENGTH}}$`);
  return pattern.test(compact) ? compact : null;
}

/** Stored form: SHA-256 over the user and the code (80 random bits: no slow hash needed). */
export function recoveryCodeHash(userId: number, code: string): string {
  return sha256(`${userId}:${recoveryCodeForm(code) ?? code}`);
}

/** Replaces the user's recovery codes with new ones, inside the caller's transaction. */
export async function replaceRecoveryCodes(trx: Executor, userId: number): Promise<string[]> {
  const codes = newRecoveryCodes();
  await replaceRecoveryCodeHashes(
    trx,
    userId,
    codes.map((code) => recoveryCodeHash(userId, code)),
  );
  return codes;
}

/** A second factor as sent: an authenticator code newer than the last one used, or a recovery code. */
export type SecondFactor = { kind: 'totp'; step: number } | { kind: 'recovery'; code: string };

const wrongCode = () => new ApiError(Code.BAD_PARAM, 'parameter code: wrong code');

/**
 * The code sent, without white space; 12 when none was. Asking for a code is not a wrong guess:
 * callers that count guesses call this before they count one.
 */
export function requireCodeSent(raw: string | undefined): string {
  const text = (raw ?? '').replace(/\s+/g, '');
  if (text === '') throw new ApiError(Code.TOTP_REQUIRED, 'an authenticator code (or a recovery code) is required in the code parameter');
  return text;
}

/**
 * Reads the code sent for an account with two-factor sign-in: 12 when none was sent, 2 when
 * an authenticator code is wrong. A recovery code is checked when it is spent.
 */
export function readSecondFactor(
  user: { totp_secret: string; totp_last_step: number | null },
  raw: string | undefined,
  nowMs: number,
): SecondFactor {
  const text = requireCodeSent(raw);
  const recovery = recoveryCodeForm(text);
  if (recovery !== null) return { kind: 'recovery', code: recovery };
  if (!/^\d{6}$/.test(text)) throw badParam('code', 'must be 6 digits or a recovery code');
  const steps = matchingSteps(user.totp_secret, text, nowMs).filter((s) => user.totp_last_step === null || s > user.totp_last_step);
  if (steps.length === 0) throw wrongCode();
  return { kind: 'totp', step: Math.max(...steps) };
}

/**
 * Uses a second factor up inside the caller's transaction: the authenticator's time step is
 * recorded (no code of it or before is accepted again), a recovery code is marked used.
 * Conditional updates: of concurrent uses one succeeds, the others answer 2.
 */
export async function spendSecondFactor(trx: Executor, userId: number, factor: SecondFactor, now: number): Promise<void> {
  if (factor.kind === 'totp') {
    if (!(await recordTotpStep(trx, userId, factor.step))) throw wrongCode();
    return;
  }
  if (!(await useRecoveryCode(trx, userId, recoveryCodeHash(userId, factor.code), now))) throw wrongCode();
}

/**
 * Counts a check of a second factor for a user before it is made, so concurrent guesses
 * cannot exceed the allowance; answers 7 past it. `succeeded` gives the attempt back.
 */
export async function admitSecondFactorCheck(services: Services, userId: number): Promise<{ succeeded(): Promise<void> }> {
  const key = `2fa:fail:${userId}`;
  const hit = await services.counters.hit(key, SECOND_FACTOR_LIMIT.windowSeconds);
  const release = async () => {
    await services.counters.hit(key, SECOND_FACTOR_LIMIT.windowSeconds, -1);
  };
  if (hit.count > SECOND_FACTOR_LIMIT.max) {
    await release();
    throw rateLimited(hit.resetIn);
  }
  return { succeeded: release };
}
