import type { Domain } from '../api/method.js';
import {
  accountInfoMethod,
  accountSessionsGet,
  accountSessionsRevoke,
  accountTotpDisable,
  accountTotpEnable,
  accountTotpSetup,
  accountUpdateEmail,
  accountUpdateInfo,
  accountUpdatePassword,
  accountVerifyEmail,
  authRequestPasswordReset,
  authResetPassword,
  authSignup,
} from './methods.js';

/** Accounts players run themselves: joining, e-mail, recovering, their profile, second factor and sessions. */
export const accountsDomain: Domain = {
  name: 'accounts',
  methods: [
    authSignup,
    accountVerifyEmail,
    authRequestPasswordReset,
    authResetPassword,
    accountInfoMethod,
    accountUpdateInfo,
    accountUpdatePassword,
    accountUpdateEmail,
    accountTotpSetup,
    accountTotpEnable,
    accountTotpDisable,
    accountSessionsGet,
    accountSessionsRevoke,
  ],
};

// What the other folders use of this one.
export { retireOutstandingTokens } from './account-tokens.js';
export { publicUrl } from './messages.js';
