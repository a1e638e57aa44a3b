import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, Code, rateLimited } from '../api/errors.js';
import { emailKey } from '../infra/address-keys.js';
import type { Services } from '../services.js';
import { captchaCheck, type CaptchaCheck } from './captcha.js';

/**
 * Guessing defence for any form that checks a secret (sign-in, sign-up, ...): a budget of
 * failures per subject (an account, an address) that nobody else can spend for the owner.
 *
 * - An attempt holds a place in each of its budgets while it is judged; a failure keeps the
 *   place, a success gives it back. Only judged failures count: an attempt refused before
 *   judgement (captcha missing, delay not over) never counts, however many are in flight, and
 *   one that finds a budget full of attempts still being judged (not of failures) waits for
 *   them rather than being challenged, so right passwords checked at once never count.
 * - Past a budget, a solved captcha is needed; without a captcha verifier, whoever exhausted
 *   it waits instead, for a delay that doubles with every further failure.
 * - A ceiling (optional) caps judged failures outright: past it, code 7 until the window ends.
 * - A trusted budget (optional) is spent first: a source the subject has used successfully
 *   before (an address, a device token) is judged on its own failures only, and is held
 *   back by nobody else's.
 */
export interface Budget {
  /** Counter name (keep personal data such as e-mail addresses out of it: hash them). */
  key: string;
  /** Failures allowed per window before the challenge (captcha or delay). */
  free: number;
  windowSeconds: number;
}

export interface DefenceRequest {
  /** Spent first when given; while it has room, nothing else is consulted. */
  trusted?: Budget;
  budgets: Budget[];
  ceiling?: Budget;
  /** Whether the client sent a solved captcha (the request's one check, shared with whatever else asks). */
  captchaSolved: CaptchaCheck;
}

export interface Attempt {
  /** The secret was wrong: the places held become failures. */
  failed(): Promise<void>;
  /** The secret was right: the places held are given back. */
  succeeded(): Promise<void>;
}

/** Delays without a captcha verifier: the first, doubled with each further failure up to the last. */
export const DELAY_LIMITS = { firstSeconds: 30, maxSeconds: 900, windowSeconds: 3600 } as const;

/** Thresholds of sign-in. */
export const SIGNIN_LIMITS = {
  /** Failures are counted in windows of this many seconds... */
  windowSeconds: 15 * 60,
  /** ...and past this many for one account a captcha (or a delay) is required, */
  captchaAfterEmailFailures: 5,
  /** and past this many in an hour, */
  hourlyEmailFailures: 10,
  /** or past this many from one address. */
  captchaAfterIpFailures: 20,
  /** Past this many judged failures for one account in an hour, sign-in is refused (code 7)... */
  ceilingEmailFailures: 100,
  ceilingWindowSeconds: 60 * 60,
  /** ...except from a known source, which may fail this many times per window on its own. */
  knownSourceFailures: 10,
} as const;

/** Thresholds of sign-up, per hour. */
export const SIGNUP_LIMITS = {
  windowSeconds: 60 * 60,
  /** Past this many sign-ups from one address, a captcha is required (without a verifier, a growing delay)... */
  captchaAfterAddressAttempts: 3,
  /** ...and past this many, sign-up from that address is refused outright (code 7). */
  ceilingAddressAttempts: 20,
  /** Sign-ups naming one e-mail address (each may tell its owner): past this, code 7. */
  ceilingEmailAttempts: 10,
} as const;

/** Wrong TOTP codes per account, across all its sign-ins, per window; past it 414. */
export const TOTP_LIMITS = { wrongCodes: 10, windowSeconds: 15 * 60 } as const;

/**
 * How long an attempt waits for the attempts being judged that fill a budget, and how often it
 * looks again; past the wait the budget counts as spent.
 */
const JUDGED_WAIT = { maxMs: 30_000, pollMs: 20 } as const;

const CAPTCHA_NEEDED = 'captcha required: solve it and send the answer in the captcha parameter';

export async function admitAttempt(services: Services, request: DefenceRequest): Promise<Attempt> {
  const { counters } = services;

  if (request.trusted) {
    const trusted = request.trusted;
    const { held } = await holdPlaces(services, [trusted]);
    if (held.length > 0)
      return {
        failed: () => countFailures(services, held),
        succeeded: () => giveBackAll(services, held),
      };
  }

  const { ceiling } = request;
  // Already past the ceiling by judged failures: no need to look at the captcha.
  if (ceiling) {
    const current = await counters.peek(failuresKey(ceiling));
    if (current.count >= ceiling.free) throw rateLimited(current.resetIn);
  }

  const places = await holdPlaces(services, request.budgets);
  const { exhausted } = places;
  let { held } = places;
  let delayed: Budget[] = [];
  let turns: Budget[] = [];
  if (exhausted.length > 0) {
    await giveBackAll(services, held);
    held = [];
    if (services.auth.captcha) {
      if (!(await request.captchaSolved())) throw new ApiError(Code.CAPTCHA, CAPTCHA_NEEDED);
    } else {
      turns = await takeTurns(services, exhausted);
      delayed = exhausted;
    }
  }

  if (ceiling) {
    const place = await holdPlaces(services, [ceiling]);
    if (place.exhausted.length > 0) {
      await Promise.all([giveBackAll(services, held), giveBackAll(services, turns)]);
      throw rateLimited((await counters.peek(ceiling.key)).resetIn);
    }
    held.push(ceiling);
  }

  return {
    async failed() {
      await countFailures(services, held);
      for (const budget of delayed) await counters.hit(overKey(budget), DELAY_LIMITS.windowSeconds);
    },
    succeeded: () => giveBackAll(services, held),
  };
}

/**
 * Takes a place in every budget, each atomically. A budget without room is spent when its judged
 * failures fill it; when attempts still being judged fill it instead, every place taken is given
 * back (nothing is held while waiting, so waiting attempts never wait on each other) and all are
 * tried again once those may have been judged, for at most JUDGED_WAIT.maxMs.
 */
async function holdPlaces(services: Services, budgets: Budget[]): Promise<{ held: Budget[]; exhausted: Budget[] }> {
  const { counters } = services;
  const deadline = Date.now() + JUDGED_WAIT.maxMs;
  for (;;) {
    const held: Budget[] = [];
    const exhausted: Budget[] = [];
    let beingJudged = false;
    for (const budget of budgets) {
      const place = await counters.take(budget.key, budget.windowSeconds, budget.free);
      if (place.taken) held.push(budget);
      else if (Date.now() >= deadline || (await counters.peek(failuresKey(budget))).count >= budget.free) exhausted.push(budget);
      else beingJudged = true;
    }
    if (!beingJudged) return { held, exhausted };
    await giveBackAll(services, held);
    await sleep(JUDGED_WAIT.pollMs);
  }
}

/** The judged failures of a budget (its places also hold the attempts being judged). */
function failuresKey(budget: Budget): string {
  return `${budget.key}:failed`;
}

async function countFailures(services: Services, budgets: Budget[]): Promise<void> {
  await Promise.all(budgets.map((b) => services.counters.hit(failuresKey(b), b.windowSeconds)));
}

/** Gives back one place in each budget (each step atomic). */
async function giveBackAll(services: Services, budgets: Budget[]): Promise<void> {
  await Promise.all(budgets.map((b) => services.counters.hit(b.key, b.windowSeconds, -1)));
}

function overKey(budget: Budget): string {
  return `${budget.key}:over`;
}

/** Without a captcha verifier: the turn of an exhausted budget, one place per delay. */
async function turnOf(services: Services, budget: Budget): Promise<Budget> {
  const over = (await services.counters.peek(overKey(budget))).count;
  const delay = Math.min(DELAY_LIMITS.maxSeconds, DELAY_LIMITS.firstSeconds * 2 ** Math.min(over, 20));
  return { key: `${budget.key}:turn`, free: 1, windowSeconds: delay };
}

/**
 * Without a captcha verifier: takes the turn of every exhausted budget, so that the attempt
 * may be judged now (and nobody else's on those budgets for their delays: each turn is taken
 * atomically, so a burst gets one attempt judged, not one per request), or takes none and
 * throws 7 with the wait. An attempt that must wait on one budget must not spend another's
 * turn: one whose own address must wait would otherwise hold an account's turn from its owner.
 */
async function takeTurns(services: Services, exhausted: Budget[]): Promise<Budget[]> {
  const { counters } = services;
  const turns = await Promise.all(exhausted.map((budget) => turnOf(services, budget)));
  for (const turn of turns) {
    const current = await counters.peek(turn.key);
    if (current.count >= turn.free) throw rateLimited(current.resetIn);
  }
  // Concurrent attempts may all have seen the turns free: whoever loses one gives back the others it took.
  const taken: Budget[] = [];
  for (const turn of turns) {
    const place = await counters.take(turn.key, turn.windowSeconds, turn.free);
    if (!place.taken) {
      await giveBackAll(services, taken);
      throw rateLimited(place.resetIn);
    }
    taken.push(turn);
  }
  return taken;
}

/**
 * Admits a sign-up attempt under the same rules: a budget per client address, past which a
 * solved captcha is needed (or, without a captcha verifier, a delay that doubles), and a
 * ceiling (code 7). Every admitted sign-up spends its place, whatever its outcome: accounts are
 * what is limited, not wrong guesses. Sign-ups naming one e-mail address are capped too (each
 * may mail its owner).
 */
export async function admitSignup(services: Services, attempt: { email: string; ip: string; captcha?: string }): Promise<void> {
  const window = SIGNUP_LIMITS.windowSeconds;
  const named = await services.counters.hit(`signup:email:${emailKey(attempt.email)}`, window);
  if (named.count > SIGNUP_LIMITS.ceilingEmailAttempts) throw rateLimited(named.resetIn);
  const admitted = await admitAttempt(services, {
    budgets: [
      { key: services.addressKeys.of('signup:ip', attempt.ip), free: SIGNUP_LIMITS.captchaAfterAddressAttempts, windowSeconds: window },
    ],
    ceiling: {
      key: services.addressKeys.of('signup:ip-ceiling', attempt.ip),
      free: SIGNUP_LIMITS.ceilingAddressAttempts,
      windowSeconds: window,
    },
    captchaSolved: captchaCheck(services, attempt.captcha, attempt.ip),
  });
  await admitted.failed();
}
