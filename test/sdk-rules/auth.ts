import { Type } from '@sinclair/typebox';
import { Num, Session, Str, always, obj, type SdkRules } from './shapes.js';

export const authRules: SdkRules = {
  'auth.signin': always(Type.Union([Session, obj({ totp_session_token: Str }, 'two-factor sign-in')])),
  'auth.totpVerify': always(Session),
  'auth.refresh': always(Session),
  'oauth.exchangeCode': always(Session),
  'bots.getToken': always(Session),
  'bots.create': always(obj({ user_id: Num })),
};
