import { Num, obj, type SdkRules } from './shapes.js';

/**
 * The reference clients read privacy.get's four trade settings as numbers (the SDK has no
 * schema for it). privacy.update may answer without data or with the settings.
 */
const Privacy = obj(
  { trades_income: Num, trades_income_from_friends: Num, trades_income_gifts: Num, trades_income_gifts_autoaccept: Num },
  'privacy',
);

export const privacyRules: SdkRules = {
  'privacy.get': () => Privacy,
  'privacy.update': () => ({ voidOr: Privacy }),
};
