import { ApiError, Code, badParam } from '../api/errors.js';
import type { Services } from '../services.js';

/** Kopecks in one unit of the currency: balances and prices are kept in kopecks, answered in units. */
export const MINOR_PER_UNIT = 100;

/** An amount in kopecks as answers show it: units with up to two decimals. */
export const toUnits = (kopecks: number): number => kopecks / MINOR_PER_UNIT;

/** How close to a whole kopeck a sent amount must be (clients send units × 100 as a float). */
const KOPECK_TOLERANCE = 1e-6;

/** A sent amount in kopecks: a whole number, or within a rounding error of one. */
export function wholeKopecks(name: string, value: number): number {
  const rounded = Math.round(value);
  if (Math.abs(value - rounded) > KOPECK_TOLERANCE) throw badParam(name, 'must be a whole number of kopecks');
  return rounded;
}

/** A sent amount in units with at most two decimals, in kopecks. */
export function unitsToKopecks(name: string, value: number): number {
  return wholeKopecks(name, value * MINOR_PER_UNIT);
}

/** A price within the market's bounds. */
export function checkPrice(services: Pick<Services, 'config'>, name: string, kopecks: number): number {
  const { minPrice, maxPrice } = services.config.market;
  if (kopecks < minPrice || kopecks > maxPrice) throw badParam(name, `must be between ${toUnits(minPrice)} and ${toUnits(maxPrice)}`);
  return kopecks;
}

export const notEnoughMoney = () => new ApiError(Code.NOT_ENOUGH_MONEY, 'your balance does not cover the price');
