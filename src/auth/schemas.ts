import { Type } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';

export const Session = Type.Object(
  {
    user_id: Uint,
    access_token: Type.String({ description: 'token for calling the API' }),
    expires_in: Type.Integer({ minimum: 0, description: 'lifetime of the access token in seconds; 0 for bot tokens, which do not expire' }),
    expires: Type.Integer({ minimum: 0, description: 'the same value as expires_in' }),
    refresh_token: Type.Optional(
      Type.String({ description: 'single use: auth.refresh exchanges it for a new session; absent from bot tokens' }),
    ),
    device_token: Type.Optional(
      Type.String({
        description:
          'auth.signin and auth.totpVerify only (not part of the reference service): send it as `device_token` with later ' +
          'sign-ins of this account, so that they are not held back by failed sign-ins from elsewhere',
      }),
    ),
  },
  { ...Strict, $id: 'Session', title: 'Session' },
);

export const TotpPending = Type.Object(
  {
    totp_session_token: Type.String({ description: 'pass to auth.totpVerify with the code within 5 minutes' }),
  },
  { ...Strict, $id: 'TotpPending', title: 'TotpPending' },
);

export const SigninResult = Type.Union([Session, TotpPending]);
