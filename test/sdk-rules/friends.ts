import { Type } from '@sinclair/typebox';
import { Num, User, UserShort, flag, isVoid, obj, opt, type SdkRules } from './shapes.js';

const list = (field: string, user: typeof User | typeof UserShort, withUser: boolean) =>
  obj({ count: Num, [field]: Type.Array(user), ...(withUser ? { user } : { user: opt(user) }) });

const FRIENDS = {
  full: list('friends', User, false),
  short: list('friends', UserShort, false),
  fullWithUser: list('friends', User, true),
  shortWithUser: list('friends', UserShort, true),
};
const REQUESTS = { full: obj({ count: Num, requests: Type.Array(User) }), short: obj({ count: Num, requests: Type.Array(UserShort) }) };

export const friendRules: SdkRules = {
  'friends.add': isVoid,
  'friends.delete': isVoid,
  'friends.get': (params) => {
    const short = params.type === 'short';
    if (flag(params, 'add_user', 0)) return short ? FRIENDS.shortWithUser : FRIENDS.fullWithUser;
    return short ? FRIENDS.short : FRIENDS.full;
  },
  'friends.getRequests': (params) => (params.type === 'short' ? REQUESTS.short : REQUESTS.full),
  // The block list under the reference names: users in either form, placeholders allowed.
  'blacklist.get': () => obj({ count: Num, users: Type.Array(Type.Union([User, UserShort])) }),
  'blacklist.add': isVoid,
  'blacklist.remove': isVoid,
  'blacklist.delete': isVoid,
};
