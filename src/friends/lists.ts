import type { Services } from '../services.js';
import { P } from '../api/params.js';
import { ApiError, Code } from '../api/errors.js';
import { loadProfiles, loadProfilesByKey, loadUsers, profileJson, type UserForm, type UserObject } from '../users/profiles.js';
import { friendshipValues } from './relations.js';

export const MAX_LIST_COUNT = 50;

/** Paging parameters shared by the relation lists. */
export const pagingParams = {
  offset: P.optional(P.uint({ default: 0, description: 'offset from the start of the list' })),
  count: P.optional(P.uint({ default: 20, tooMany: MAX_LIST_COUNT, description: 'number of elements; at most 50' })),
  type: P.optional(P.string({ description: '`short` returns the short form; any other value the full form' })),
};

export const formOf = (type: string | undefined): UserForm => (type === 'short' ? 'short' : 'full');

/** Profiles of `ids` in their order, as seen by `viewerId` (ids whose user vanished are skipped). */
export async function profilesInOrder(services: Services, ids: number[], form: UserForm, viewerId?: number): Promise<UserObject[]> {
  const users = await loadUsers(services, ids, { form, viewerId });
  return ids.map((id) => users.get(id)).filter((u): u is UserObject => u !== undefined);
}

/** The same as a JSON array, as JSON.stringify would write `profilesInOrder`'s answer. */
export async function profilesJsonInOrder(services: Services, ids: number[], form: UserForm, viewerId?: number): Promise<string> {
  const profiles = await loadProfiles(services, ids);
  const others = [...profiles.keys()].filter((id) => id !== viewerId);
  const relations = form === 'full' && viewerId !== undefined ? await friendshipValues(services, viewerId, others) : undefined;
  const nowMs = services.clock.now();
  const json: string[] = [];
  for (const id of ids) {
    const profile = profiles.get(id);
    if (profile !== undefined) json.push(profileJson(services, profile, form, id === viewerId ? undefined : relations?.get(id), nowMs));
  }
  return `[${json.join(',')}]`;
}

/**
 * The user an id or domain names. A globally blocked account takes no part in the social
 * graph (it is left out of every list), so with `active` it counts as unknown: 101.
 */
export async function requireUser(services: Services, idOrDomain: number | string, options: { active: boolean }): Promise<number> {
  const { byId, byDomain } =
    typeof idOrDomain === 'number' ? await loadProfilesByKey(services, [idOrDomain]) : await loadProfilesByKey(services, [], [idOrDomain]);
  const row = typeof idOrDomain === 'number' ? byId.get(idOrDomain) : byDomain.get(idOrDomain);
  if (row === undefined || (options.active && row.global_ban === 1))
    throw new ApiError(Code.USER_NOT_FOUND, `parameter user_id: user ${idOrDomain} does not exist`);
  return row.user_id;
}
