import { Type } from '@sinclair/typebox';
import { Bit, Strict, Uint } from '../api/schema-types.js';
import { UserFull } from '../users/index.js';

const bit = (description: string) => Type.Union([Type.Literal(0), Type.Literal(1)], { description });

export const AccountInfo = Type.Object(
  {
    ...UserFull.properties,
    email: Type.Optional(Type.String({ description: 'the address the account signs in with' })),
    email_verified: bit('1 once the address was confirmed (account.verifyEmail)'),
    hasTotp: bit('1 when two-factor sign-in is on'),
    hasPassword: bit('1 when the account has a password'),
    balance: Type.Number({ description: 'the wallet, in units of the currency (kopecks / 100)' }),
  },
  { ...Strict, $id: 'AccountInfo', description: "The caller's own account: the full user plus what only they see" },
);

export const TotpSetupResult = Type.Object(
  {
    secret: Type.String({ description: 'base32 secret for the authenticator (not active until account.totpEnable)' }),
    otpauth_uri: Type.String({ description: 'otpauth:// URI for authenticator apps (QR code content)' }),
  },
  { ...Strict, $id: 'TotpSetup' },
);

export const RecoveryCodes = Type.Object(
  {
    recovery_codes: Type.Array(Type.String(), { minItems: 10, maxItems: 10, description: 'ten one-time codes, shown only now' }),
  },
  { ...Strict, $id: 'RecoveryCodes' },
);

export const SessionList = Type.Object(
  {
    sessions: Type.Array(
      Type.Object(
        {
          session_id: Uint,
          created: Type.Integer({ minimum: 0, description: 'when the sign-in began, Unix seconds' }),
          last_used: Type.Integer({ minimum: 0, description: 'last request with it, Unix seconds (updated at most once a minute)' }),
          ip: Type.String({ description: 'address it was issued for (last refresh)' }),
          user_agent: Type.String({ description: 'User-Agent of the client that signed in or last refreshed; empty when none was sent' }),
          current: Bit,
        },
        Strict,
      ),
    ),
  },
  { ...Strict, $id: 'SessionList' },
);
