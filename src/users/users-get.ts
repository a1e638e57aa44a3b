import { Type } from '@sinclair/typebox';
import { SerializedList, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { authError, tooManyObjects } from '../api/errors.js';
import { UserAny } from './schemas.js';
import { inactiveObject, loadProfilesByKey, profileTexts, shownProfile, type Profile } from './profiles.js';

export const MAX_USERS_PER_REQUEST = 50;

/** Requested keys in order, duplicates removed: `user_id` first, then `user_ids`. */
function requestedKeys(userId: number | string | undefined, userIds: (number | string)[] = []): Set<number | string> {
  const count = userIds.length + (userId !== undefined ? 1 : 0);
  if (count > MAX_USERS_PER_REQUEST) throw tooManyObjects('user_ids', MAX_USERS_PER_REQUEST);
  return new Set(userId !== undefined ? [userId, ...userIds] : userIds);
}

export const usersGet = defineMethod({
  name: 'users.get',
  summary: 'Returns user profiles',
  description:
    'Users named by `user_id` and/or `user_ids` (ids or domains, at most 50 in all), in request order with duplicates ' +
    'removed; without either, the signed-in caller. An unknown id or domain gives a placeholder with ' +
    '`inactive: "not_exists"`, a globally blocked account one with `inactive: "global_ban"`. `type=short` gives the ' +
    "short form, any other value the full form, which carries `friendship` (the caller's relation) when a caller is " +
    'signed in and asks about someone else. A user playing a live game carries `current_game` (`gs_id`, `gs_game_id`).',
  auth: 'optional',
  params: P.object({
    user_id: P.optional(P.idOrDomain({ description: 'id or domain' })),
    user_ids: P.optional(P.idOrDomainSet({ tooMany: MAX_USERS_PER_REQUEST, description: 'ids or domains; at most 50 elements' })),
    type: P.optional(P.string({ description: '`short` returns the short form; any other value the full form' })),
  }),
  result: Type.Array(UserAny),
  handler: async (ctx, params) => {
    const { services, caller } = ctx;
    const keys = requestedKeys(params.user_id, params.user_ids);
    if (keys.size === 0) {
      if (!caller) throw authError('authorization required: send an access_token or name the users');
      keys.add(caller.userId);
    }
    const form = params.type === 'short' ? 'short' : 'full';
    const ids: number[] = [];
    const domains: string[] = [];
    for (const key of keys) {
      if (typeof key === 'number') ids.push(key);
      else domains.push(key);
    }
    const { ofIds, byDomain } = await loadProfilesByKey(services, ids, domains);

    const shown: (Profile | string)[] = [];
    // The keys are distinct, so only a domain can name someone a second time.
    const shownIds = domains.length > 0 ? new Set<number>() : undefined;
    let idIndex = 0;
    for (const key of keys) {
      const profile = typeof key === 'number' ? ofIds[idIndex++] : byDomain.get(key);
      if (profile === undefined) {
        shown.push(JSON.stringify(inactiveObject('not_exists', typeof key === 'number' ? { user_id: key } : { domain: key })));
        continue;
      }
      if (shownIds !== undefined) {
        if (shownIds.has(profile.user_id)) continue;
        shownIds.add(profile.user_id);
      }
      shown.push(shownProfile(profile));
    }
    const texts = await profileTexts(services, shown, form, caller?.userId);
    const playing = await services.hooks.users.currentGames(
      services,
      shown.flatMap((u) => (typeof u === 'string' ? [] : [u.user_id])),
    );
    if (playing.size > 0)
      shown.forEach((u, i) => {
        const game = typeof u === 'string' ? undefined : playing.get(u.user_id);
        if (game)
          texts[i] =
            `${texts[i]!.slice(0, -1)},"current_game":${JSON.stringify({ gs_id: game.gs_id, gs_game_id: String(game.gs_game_id) })}}`;
      });
    return new SerializedList(texts);
  },
});
