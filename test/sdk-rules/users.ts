import { Type } from '@sinclair/typebox';
import { Num, User, UserShort, always, obj, type SdkRules } from './shapes.js';

const short = (params: Record<string, unknown>) => params.type === 'short';
const UsersFull = Type.Array(User);
const UsersShort = Type.Array(UserShort);

export const userRules: SdkRules = {
  // A list in the form `type` asks for, placeholders in place of users it cannot show.
  'users.get': (params) => (short(params) ? UsersShort : UsersFull),
  'users.search': always(obj({ count: Num, users: UsersShort })),
};
