import { api, ok } from './api/client';

export interface UserLike {
  user_id: number;
  nick: string;
  avatar?: string;
  domain?: string;
  online?: number;
}

/** Where a player's profile is: by domain when they have one, as the reference does. */
export const profilePath = (user: Pick<UserLike, 'user_id' | 'domain'>) =>
  user.domain ? `/p/${encodeURIComponent(user.domain)}` : `/profile/${user.user_id}`;

/** Players by id, for lists that carry ids only. */
export async function usersById(ids: number[]): Promise<Map<number, UserLike>> {
  const unique = [...new Set(ids)];
  const found = new Map<number, UserLike>();
  for (let i = 0; i < unique.length; i += 100) {
    const { data } = await ok(api.POST('/api/users.get', { body: { user_ids: unique.slice(i, i + 100).join(',') } }));
    for (const user of data) if (user.user_id !== undefined) found.set(user.user_id, user as UserLike);
  }
  return found;
}
