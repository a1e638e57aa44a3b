import { Type } from '@sinclair/typebox';
import { SerializedData, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { authError, tooManyObjects } from '../api/errors.js';
import { UserAny } from './schemas.js';
import { friendshipValues } from '../friends/relations.js';
import { inactiveObject, isGloballyBanned, loadProfilesByKey, profileJson, type Profile } from './profiles.js';

export const MAX_USERS_PER_REQUEST = 50;

/** Requested keys in order, duplicates removed: `user_id` first, then `user_ids`. */
function requestedKeys(userId: number | string | undefined, userIds: (number | string)[] | undefined): (number | string)[] {
  const all = [...(userId !== undefined ? [userId] : []), ...(userIds ?? [])];
  if (all.length > MAX_USERS_PER_REQUEST) throw tooManyObjects('user_ids', MAX_USERS_PER_REQUEST);
  return [...new Set(all)];
}

export const usersGet = defineMethod({
  name: 'users.get',
  summary: 'Returns user profiles',
  description:
    'Users named by `user_id` and/or `user_ids` (ids or domains, at most 50 in all), in request order with duplicates ' +
    'removed; without either, the signed-in caller. An unknown id or domain gives a placeholder with ' +
    '`inactive: "not_exists"`, a globally blocked account one with `inactive: "global_ban"`. `type=short` gives the ' +
    'short form, any other value the full form, which carries `friendship` (the caller\'s relation) when a caller is ' +
    'signed in and asks about someone else.',
  auth: 'optional',
  params: P.object({
    user_id: P.optional(P.idOrDomain({ description: 'id or domain' })),
    user_ids: P.optional(P.idOrDomainSet({ tooMany: MAX_USERS_PER_REQUEST, description: 'ids or domains; at most 50 elements' })),
    type: P.optional(P.string({ description: '`short` returns the short form; any other value the full form' })),
  }),
  result: Type.Array(UserAny),
  handler: async (ctx, params) => {
    const { services, caller } = ctx;
    let keys = requestedKeys(params.user_id, params.user_ids);
    if (keys.length === 0) {
      if (!caller) throw authError('authorization required: send an access_token or name the users');
      keys = [caller.userId];
    }
    const form = params.type === 'short' ? 'short' : 'full';
    const ids = keys.filter((k): k is number => typeof k === 'number');
    const domains = keys.filter((k): k is string => typeof k === 'string');
    const { byId, byDomain } = await loadProfilesByKey(services, ids, domains);

    // Profiles are written once the caller's relations to all of them are read, in one go.
    const shown: (Profile | string)[] = [];
    const shownIds = new Set<number>();
    const others: number[] = [];
    for (const key of keys) {
      const profile = typeof key === 'number' ? byId.get(key) : byDomain.get(key);
      if (profile === undefined) {
        shown.push(JSON.stringify(inactiveObject('not_exists', typeof key === 'number' ? { user_id: key } : { domain: key })));
        continue;
      }
      if (shownIds.has(profile.user_id)) continue;
      shownIds.add(profile.user_id);
      if (isGloballyBanned(profile)) {
        shown.push(JSON.stringify(inactiveObject('global_ban', { user_id: profile.user_id, domain: profile.domain })));
        continue;
      }
      shown.push(profile);
      if (profile.user_id !== caller?.userId) others.push(profile.user_id);
    }
    const viewerId = form === 'full' && caller ? caller.userId : undefined;
    const relations = viewerId === undefined ? undefined : await friendshipValues(services, viewerId, others);
    const nowMs = services.clock.now();
    const json = shown.map((u) =>
      typeof u === 'string' ? u : profileJson(services, u, form, u.user_id === viewerId ? undefined : relations?.get(u.user_id), nowMs),
    );
    return new SerializedData(`[${json.join(',')}]`);
  },
});
